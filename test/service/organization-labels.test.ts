import { describe, expect, it } from 'vitest';
import { organizationLabeller } from '../../src/service/metrics/metrics.js';

describe('the organization label of metrics', () => {
  it('names the first N organizations, every later one other, and keeps a name once given', () => {
    const label = organizationLabeller(2);
    expect(['org_a', 'org_b', 'org_c', 'org_a', 'org_d', 'org_b'].map(label)).toEqual([
      'org_a',
      'org_b',
      'other',
      'org_a',
      'other',
      'org_b',
    ]);
  });

  it('is all for every organization by default, so the series never grow with tenants', () => {
    const label = organizationLabeller(0);
    expect(new Set(Array.from({ length: 1000 }, (_, i) => label(`org_${i}`)))).toEqual(new Set(['all']));
  });
});
