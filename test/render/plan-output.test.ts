import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { printQueryRows } from '../../src/commands/query/print-rows.js';
import type { QueryPage } from '../../src/commands/query/wait.js';
import { IOStreams } from '../../src/render/iostreams.js';
import type { LakeClient } from '../../src/client/lake-client.js';

const PLAN =
  '┌──────────────┐\n│  PROJECTION  │\n└──────┬───────┘\n┌──────┴───────┐\n│  DUMMY_SCAN  │\n└──────────────┘';

function capture(isTTY: boolean): { io: IOStreams; text: () => string } {
  let out = '';
  const stdout = { isTTY, columns: 100, write: (chunk: string) => ((out += chunk), true) };
  return { io: new IOStreams(stdout as never, { write: () => true } as never, Readable.from([]), {}), text: () => out };
}

describe('an EXPLAIN result on a terminal', () => {
  const page: QueryPage = {
    object: 'query',
    id: 'qr_1',
    status: 'succeeded',
    created: 0,
    sql: 'explain select 1',
    livemode: true,
    row_count: 1,
    columns: ['explain_key', 'explain_value'],
    data: [{ explain_key: 'physical_plan', explain_value: PLAN }],
    has_more: false,
    next_cursor: null,
  };

  it('prints the plan as drawn, not squeezed into a table cell', async () => {
    const { io, text } = capture(true);
    await printQueryRows({} as LakeClient, io, page, 'table', 1000);
    expect(text()).toBe(`${PLAN}\n`);
  });

  it('keeps the two columns in other formats (csv, json) for scripts', async () => {
    const { io, text } = capture(false);
    await printQueryRows({} as LakeClient, io, page, 'json', 1000);
    expect(JSON.parse(text())).toEqual([{ explain_key: 'physical_plan', explain_value: PLAN }]);
  });
});
