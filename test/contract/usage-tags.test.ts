import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TAGS_A_MONTH, OTHER_TAGS } from '../../src/service/usage/usage-store.js';
import type { Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * Tags are the caller's to make up, ten a query: a month's usage names at most 1,000 of them, and sums the rest as
 * "(other tags)", so neither the store nor the usage report grows with every new tag.
 */
describe('usage by tag', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api.close();
  });

  it('names 1,000 tags a month and sums the rest as (other tags)', async () => {
    const org = api.home.organization.id;
    const usage = api.services.usage;
    const tags = Array.from({ length: MAX_TAGS_A_MONTH + 5 }, (_, i) => `t${String(i).padStart(5, '0')}`);
    for (let i = 0; i < tags.length; i += 10)
      await usage.recordEach(org, { queries_run: 1, result_bytes: 100 }, tags.slice(i, i + 10));
    // A tag already named goes on being counted as itself.
    await usage.recordEach(org, { queries_run: 1, result_bytes: 100 }, ['t00000']);
    const report = (await (await api.request('/usage')).json()) as Json;
    const byTag = report.by_tag as Json[];
    expect(byTag).toHaveLength(MAX_TAGS_A_MONTH + 1);
    expect(byTag.find((t) => t.tag === 't00000')).toMatchObject({ queries_run: 2, result_bytes: 200 });
    expect(byTag.find((t) => t.tag === OTHER_TAGS)).toMatchObject({ queries_run: 5, result_bytes: 500 });
    expect(byTag.some((t) => t.tag === tags[MAX_TAGS_A_MONTH])).toBe(false);
  });
});
