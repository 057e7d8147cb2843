import type { Palette } from './colors.js';
import type { OutputStream } from './iostreams.js';
import { displayWidth, renderTable, type Row } from './table.js';
import { terminalSafe } from './terminal-text.js';
import { csvField, markdownField, tsvField, valueToText } from './values.js';

export const OUTPUT_FORMATS = ['table', 'csv', 'tsv', 'json', 'ndjson', 'markdown', 'vertical'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

/**
 * Writes rows in one format as they arrive, page by page, so a large result never has to be held whole.
 * The table format is the exception: it measures column widths, so it holds what it is given until end().
 */
export interface RowWriter {
  begin(columns: readonly string[]): void;
  write(rows: readonly Row[]): void;
  end(): void;
}

export function createRowWriter(
  format: OutputFormat,
  out: OutputStream,
  palette: Palette,
  /** `verticalHint`: how the caller shows every column of a table too wide for the terminal. */
  options: { verticalHint?: string } = {},
): RowWriter {
  switch (format) {
    case 'csv':
      return delimitedWriter(out, ',', csvField, csvField);
    case 'tsv':
      return delimitedWriter(out, '\t', tsvField, (name) => tsvField(name));
    case 'ndjson':
      return jsonLinesWriter(out);
    case 'json':
      return jsonArrayWriter(out);
    case 'markdown':
      return markdownWriter(out);
    case 'table':
      return tableWriter(out, palette, options.verticalHint);
    case 'vertical':
      return verticalWriter(out, palette);
  }
}

function delimitedWriter(
  out: OutputStream,
  separator: string,
  field: (value: unknown) => string,
  header: (name: string) => string,
): RowWriter {
  let columns: readonly string[] = [];
  return {
    begin(names) {
      columns = names;
      out.write(`${names.map(header).join(separator)}\n`);
    },
    write(rows) {
      let chunk = '';
      for (const row of rows) chunk += `${columns.map((c) => field(row[c])).join(separator)}\n`;
      if (chunk) out.write(chunk);
    },
    end() {},
  };
}

function jsonLinesWriter(out: OutputStream): RowWriter {
  return {
    begin() {},
    write(rows) {
      let chunk = '';
      for (const row of rows) chunk += `${JSON.stringify(row)}\n`;
      if (chunk) out.write(chunk);
    },
    end() {},
  };
}

/** One JSON document however many pages arrive: `[` first, rows comma-separated, `]` last. */
function jsonArrayWriter(out: OutputStream): RowWriter {
  let first = true;
  return {
    begin() {
      out.write('[');
    },
    write(rows) {
      let chunk = '';
      for (const row of rows) {
        chunk += `${first ? '\n' : ',\n'}${JSON.stringify(row)}`;
        first = false;
      }
      if (chunk) out.write(chunk);
    },
    end() {
      out.write(first ? ']\n' : '\n]\n');
    },
  };
}

function markdownWriter(out: OutputStream): RowWriter {
  let columns: readonly string[] = [];
  return {
    begin(names) {
      columns = names;
      out.write(`| ${names.map(markdownField).join(' | ')} |\n|${names.map(() => ' --- ').join('|')}|\n`);
    },
    write(rows) {
      let chunk = '';
      for (const row of rows) chunk += `| ${columns.map((c) => markdownField(row[c])).join(' | ')} |\n`;
      if (chunk) out.write(chunk);
    },
    end() {},
  };
}

function tableWriter(out: OutputStream, palette: Palette, verticalHint: string | undefined): RowWriter {
  let columns: readonly string[] = [];
  const held: Row[] = [];
  return {
    begin(names) {
      columns = names;
    },
    write(rows) {
      held.push(...rows);
    },
    end() {
      // On a terminal the table fits its width (long cells cut, middle columns hidden and counted); in a pipe,
      // where no width is known, every column is drawn whole.
      const width = out.isTTY && out.columns ? out.columns : undefined;
      out.write(renderTable(columns, held, palette, { width, ...(verticalHint ? { verticalHint } : {}) }));
    },
  };
}

/**
 * One record per block, a field per line (psql's \x, trino's VERTICAL): for wide rows and long values. Rows are
 * written as they arrive.
 */
function verticalWriter(out: OutputStream, palette: Palette): RowWriter {
  let columns: readonly string[] = [];
  let width = 0;
  let count = 0;
  return {
    begin(names) {
      columns = names;
      width = Math.max(0, ...names.map((n) => displayWidth(terminalSafe(n))));
    },
    write(rows) {
      let chunk = '';
      for (const row of rows) {
        count++;
        chunk += `${palette.dim(`-[ RECORD ${count} ]${'-'.repeat(Math.max(3, width - 8))}`)}\n`;
        for (const c of columns) {
          const value = row[c];
          const text =
            value === null || value === undefined
              ? palette.dim('NULL')
              : terminalSafe(valueToText(value)).replace(/\n/g, `\n${' '.repeat(width)} | `);
          const name = terminalSafe(c);
          chunk += `${palette.bold(name)}${' '.repeat(Math.max(0, width - displayWidth(name)))} | ${text}\n`;
        }
      }
      if (chunk) out.write(chunk);
    },
    end() {
      if (count === 0) out.write(palette.dim('(no rows)\n'));
    },
  };
}
