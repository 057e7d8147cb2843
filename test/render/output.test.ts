import { describe, expect, it } from 'vitest';
import { paletteFor, prepareColors } from '../../src/render/colors.js';
import { printFields } from '../../src/render/record.js';
import { createRowWriter, OUTPUT_FORMATS, type OutputFormat } from '../../src/render/rows.js';
import { startSpinner } from '../../src/render/spinner.js';
import { captureStreams } from '../helpers/streams.js';
import { waitFor } from '../helpers/wait-for.js';

const COLUMNS = ['id', 'name', 'note'];
const PAGES = [
  [{ id: 1, name: 'a,b', note: null }],
  [
    { id: 2, name: 'say "hi"', note: 'tab\there\nline' },
    { id: 3, name: 'pipe|x', note: { k: [1, 2] } },
  ],
];

function render(format: OutputFormat, tty = false): string {
  const { io, out } = captureStreams(tty);
  const writer = createRowWriter(format, out, paletteFor(io, 'stdout'));
  writer.begin(COLUMNS);
  for (const page of PAGES) writer.write(page);
  writer.end();
  return out.text;
}

describe('row formats', () => {
  it('csv quotes per RFC 4180 and prints NULL as empty', () => {
    expect(render('csv')).toBe('id,name,note\n1,"a,b",\n2,"say ""hi""","tab\there\nline"\n3,pipe|x,"{""k"":[1,2]}"\n');
  });

  it('tsv keeps one row per line with escapes and \\N for NULL', () => {
    expect(render('tsv')).toBe('id\tname\tnote\n1\ta,b\t\\N\n2\tsay "hi"\ttab\\there\\nline\n3\tpipe|x\t{"k":[1,2]}\n');
  });

  it('json is one document across pages; ndjson one object per line', () => {
    const all = PAGES.flat();
    expect(JSON.parse(render('json'))).toEqual(all);
    expect(
      render('ndjson')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(all);
    const { io, out } = captureStreams(false);
    const empty = createRowWriter('json', out, paletteFor(io, 'stdout'));
    empty.begin(COLUMNS);
    empty.end();
    expect(JSON.parse(out.text)).toEqual([]);
  });

  it('markdown escapes pipes and newlines', () => {
    const text = render('markdown');
    expect(text.split('\n')[0]).toBe('| id | name | note |');
    expect(text).toContain('pipe\\|x');
    expect(text).toContain('tab\there<br>line');
  });

  it('table draws every row with borders and no colour in a pipe', () => {
    const text = render('table');
    expect(text).toContain('┌');
    expect(text).toContain('say "hi"');
    expect(text).not.toContain('\x1b[');
  });

  it('knows exactly the documented formats', () => {
    expect([...OUTPUT_FORMATS]).toEqual(['table', 'csv', 'tsv', 'json', 'ndjson', 'markdown', 'vertical']);
  });
});

describe('terminal decisions', () => {
  it('colour only on a terminal, NO_COLOR wins over a terminal, FORCE_COLOR wins over a pipe', () => {
    expect(captureStreams(true).io.colorEnabled('stdout')).toBe(true);
    expect(captureStreams(false).io.colorEnabled('stdout')).toBe(false);
    expect(captureStreams(true, { NO_COLOR: '1' }).io.colorEnabled('stdout')).toBe(false);
    expect(captureStreams(false, { FORCE_COLOR: '1' }).io.colorEnabled('stdout')).toBe(true);
    const flagged = captureStreams(true).io;
    flagged.disableColor();
    expect(flagged.colorEnabled('stderr')).toBe(false);
  });

  it('records are aligned with colour on a terminal and tab-separated in a pipe', async () => {
    const piped = captureStreams(false);
    printFields(piped.io, [
      ['organization', 'org_1'],
      ['scopes', 'a b'],
    ]);
    expect(piped.out.text).toBe('organization\torg_1\nscopes\ta b\n');
    const tty = captureStreams(true);
    await prepareColors(tty.io);
    printFields(tty.io, [
      ['organization', 'org_1'],
      ['scopes', 'a b'],
    ]);
    expect(tty.out.text).toContain('\x1b[');
    expect(tty.out.text).toContain('org_1');
  });

  it('the spinner draws on a terminal stderr only', async () => {
    const piped = captureStreams(false);
    const quiet = startSpinner(piped.io, 'running');
    quiet.stop();
    expect(piped.err.text).toBe('');
    const tty = captureStreams(true);
    const spinner = startSpinner(tty.io, 'running');
    await waitFor(
      () => tty.err.text,
      (text) => /\d\.\ds/.test(text),
    );
    spinner.stop();
    expect(tty.err.text).toContain('running');
    expect(tty.err.text).toMatch(/\d\.\ds/);
    expect(tty.out.text).toBe('');
  });
});
