import { describe, expect, it } from 'vitest';
import { paletteFor } from '../../src/render/colors.js';
import { IOStreams } from '../../src/render/iostreams.js';
import { createRowWriter } from '../../src/render/rows.js';
import { displayWidth, renderTable } from '../../src/render/table.js';
import { Readable } from 'node:stream';

const plain = paletteFor(
  new IOStreams({ write: () => true } as never, { write: () => true } as never, Readable.from([]), {}),
  'stdout',
);

/** 15 columns: an id, text of several lengths, a DECIMAL (as text), a long note, a timestamp last. */
const COLUMNS = [
  'order_id',
  'customer',
  'email',
  'status',
  'region',
  'country',
  'city',
  'channel',
  'amount',
  'discount',
  'tax',
  'currency',
  'note',
  'priority',
  'created_at',
];
const ROWS = Array.from({ length: 5 }, (_, i) => ({
  order_id: 1000 + i,
  customer: `Customer number ${i}`,
  email: `someone.${i}@example.com`,
  status: i % 2 ? 'shipped' : 'pending',
  region: 'EMEA',
  country: 'Netherlands',
  city: 'Amsterdam',
  channel: 'web',
  amount: `${(123.45 * (i + 1)).toFixed(2)}`,
  discount: i === 2 ? null : '0.10',
  tax: '21.00',
  currency: 'EUR',
  note: 'a rather long free-text note that goes on and on about the delivery window and the door code',
  priority: i,
  created_at: '2026-11-22 10:00:00',
}));

describe('tables that fit the terminal', () => {
  for (const width of [60, 100, 200]) {
    it(`a 15-column result fits ${width} columns, keeps the first and last columns, and says what it hid`, () => {
      const text = renderTable(COLUMNS, ROWS, plain, { width });
      const lines = text.trimEnd().split('\n');
      for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(width);
      expect(lines[1]).toMatch(/^│ order_id/);
      expect(lines[1]).toMatch(/created_at +│$/);
      const hidden = /(\d+) of 15 columns hidden/.exec(text);
      if (width < 200) expect(hidden).not.toBeNull();
      const shownHeaders = lines[1]!
        .split('│')
        .map((c) => c.trim())
        .filter(Boolean);
      expect(shownHeaders.filter((h) => h !== '…').length + Number(hidden?.[1] ?? 0)).toBe(15);
      if (width === 200) expect(text).toContain('…'); // the long note is cut even when every column fits
    });
  }

  it('right-aligns numbers, DECIMAL text included; NULL is shown; long cells end with an ellipsis', () => {
    const text = renderTable(
      ['name', 'amount', 'note'],
      [
        { name: 'a', amount: '5.00', note: 'x'.repeat(60) },
        { name: 'bb', amount: '12345.67', note: null },
      ],
      plain,
      { width: 80 },
    );
    const rows = text.split('\n').slice(3, 5);
    expect(rows[0]).toMatch(/│ a    │     5\.00 │ x{39}… │/);
    expect(rows[1]).toMatch(/│ bb   │ 12345\.67 │ NULL/);
  });

  it('without a width (a pipe) every column is drawn whole', () => {
    const text = renderTable(COLUMNS, ROWS, plain, {});
    expect(text).not.toMatch(/columns hidden/);
    expect(text).toContain('door code');
  });

  it('--output vertical prints one record per block, a field per line', () => {
    let out = '';
    const writer = createRowWriter('vertical', { write: (s: string) => ((out += s), true) } as never, plain);
    writer.begin(['id', 'customer_name']);
    writer.write([
      { id: 1, customer_name: 'Ada' },
      { id: 2, customer_name: null },
    ]);
    writer.end();
    expect(out).toBe(
      '-[ RECORD 1 ]-----\nid            | 1\ncustomer_name | Ada\n-[ RECORD 2 ]-----\nid            | 2\ncustomer_name | NULL\n',
    );
  });
});
