import type { Palette } from './colors.js';
import { terminalSafe } from './terminal-text.js';
import { valueToText } from './values.js';

export type Row = Record<string, unknown>;

/** What the terminal allows: its width in columns; undefined draws every column at full width (a pipe). */
export interface TableLayout {
  width?: number;
  /** What shows every column, in the words of where the table is printed (`\x` in the shell). */
  verticalHint?: string;
}

/** Widest a cell is shown when the table must fit: longer text is cut with an ellipsis. */
const MAX_CELL = 40;
/** Narrowest a column is squeezed to before columns are hidden instead. */
const MIN_CELL = 8;
const ELLIPSIS = '…';
const NUMBER_TEXT = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** Characters a terminal draws two cells wide (CJK, fullwidth forms, most emoji). */
const WIDE =
  /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1faff}\u{20000}-\u{3fffd}]/u;

export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += WIDE.test(ch) ? 2 : 1;
  return width;
}

/** Text cut to `width` display columns, ending with an ellipsis when it was longer. */
export function cut(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = WIDE.test(ch) ? 2 : 1;
    if (used + w > width - 1) break;
    out += ch;
    used += w;
  }
  return out + ELLIPSIS;
}

const pad = (text: string, width: number, right: boolean): string => {
  const space = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return right ? space + text : text + space;
};

/** A cell's text on one line (line breaks and tabs would break the table's rows), with no control character. */
const cellText = (value: unknown): string =>
  terminalSafe(valueToText(value).replace(/\r?\n/g, '↵').replace(/\t/g, ' '));

/** Numbers (DECIMAL and HUGEINT arrive as text) read best right-aligned: a column of numbers and NULLs only. */
function isNumeric(rows: readonly Row[], column: string): boolean {
  let seen = false;
  for (const row of rows) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    if (
      typeof value !== 'number' &&
      typeof value !== 'bigint' &&
      !(typeof value === 'string' && NUMBER_TEXT.test(value))
    )
      return false;
    seen = true;
  }
  return seen;
}

/** The table's width for these column widths: `│ a │ b │`. */
const tableWidth = (widths: readonly number[]): number => widths.reduce((sum, w) => sum + w + 3, 1);

/**
 * Which columns to show, and how wide, to fit `width`: cells over MAX_CELL are cut first; then columns are
 * squeezed toward MIN_CELL; then middle columns are hidden (the first and last ones are what people look for),
 * with one narrow `…` column where they were.
 */
function fit(
  natural: readonly number[],
  headers: readonly number[],
  width: number | undefined,
): { shown: number[]; widths: number[]; hiddenAt?: number } {
  const all = natural.map((_, i) => i);
  if (width === undefined || tableWidth(natural) <= width) return { shown: all, widths: [...natural] };
  let widths = natural.map((w) => Math.min(w, MAX_CELL));
  if (tableWidth(widths) <= width) return { shown: all, widths };
  // Squeeze the widest columns, never below their header (up to 16) or MIN_CELL, so every header stays readable.
  const floor = widths.map((w, i) => Math.min(w, Math.max(MIN_CELL, Math.min(headers[i] as number, 16))));
  while (tableWidth(widths) > width) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++)
      if (
        (widths[i] as number) > (floor[i] as number) &&
        (widest < 0 || (widths[i] as number) > (widths[widest] as number))
      )
        widest = i;
    if (widest < 0) break;
    widths[widest] = (widths[widest] as number) - 1;
  }
  if (tableWidth(widths) <= width) return { shown: all, widths };
  // Hide middle columns: take columns from both ends, alternately, while they fit beside the `…` column.
  widths = natural.map((w, i) => Math.min(w, Math.max(MIN_CELL * 2, Math.min(headers[i] as number, MAX_CELL))));
  const left: number[] = [];
  const right: number[] = [];
  let budget = width - 1 - (ELLIPSIS.length + 3);
  for (let l = 0, r = natural.length - 1, fromLeft = true; l <= r; fromLeft = !fromLeft) {
    const next = fromLeft ? l : r;
    const need = Math.min(widths[next] as number, MAX_CELL) + 3;
    if (need > budget) break;
    budget -= need;
    if (fromLeft) left.push(l++);
    else right.unshift(r--);
  }
  if (left.length === 0) left.push(0);
  const shown = [...left, ...right];
  return { shown, widths: shown.map((i) => widths[i] as number), hiddenAt: left.length };
}

/** Rows as a bordered table that fits the layout's width; a note under it says how many columns it hid. */
export function renderTable(
  names: readonly string[],
  rows: readonly Row[],
  palette: Palette,
  layout: TableLayout = {},
): string {
  const columns = names.map((name) => terminalSafe(name.replace(/\r?\n/g, '↵')));
  const texts = rows.map((row) =>
    names.map((c) => (row[c] === null || row[c] === undefined ? null : cellText(row[c]))),
  );
  const numeric = names.map((c) => isNumeric(rows, c));
  const natural = columns.map((c, i) => Math.max(displayWidth(c), ...texts.map((t) => displayWidth(t[i] ?? 'NULL'))));
  const { shown, widths, hiddenAt } = fit(natural, columns.map(displayWidth), layout.width);
  const hidden = columns.length - shown.length;
  const cells = (values: readonly string[], style: (text: string, i: number) => string): string => {
    const parts = values.map((v, i) => style(v, i));
    if (hiddenAt !== undefined) parts.splice(hiddenAt, 0, palette.dim(ELLIPSIS));
    return `│ ${parts.join(' │ ')} │`;
  };
  const allWidths =
    hiddenAt === undefined ? widths : [...widths.slice(0, hiddenAt), ELLIPSIS.length, ...widths.slice(hiddenAt)];
  const line = (l: string, m: string, r: string): string =>
    `${l}${allWidths.map((w) => '─'.repeat(w + 2)).join(m)}${r}`;
  const out = [
    line('┌', '┬', '┐'),
    cells(
      shown.map((c, k) =>
        pad(cut(columns[c] as string, widths[k] as number), widths[k] as number, numeric[c] as boolean),
      ),
      (t) => palette.bold(t),
    ),
    line('├', '┼', '┤'),
  ];
  for (const text of texts) {
    out.push(
      cells(
        shown.map((c, k) => {
          const value = text[c];
          const w = widths[k] as number;
          return value === null
            ? pad(palette.dim('NULL'), w + (palette.dim('NULL').length - 4), numeric[c] as boolean)
            : pad(cut(value as string, w), w, numeric[c] as boolean);
        }),
        (t) => t,
      ),
    );
  }
  out.push(line('└', '┴', '┘'));
  if (hidden > 0)
    out.push(
      palette.dim(
        cut(
          `${hidden} of ${columns.length} columns hidden; ${layout.verticalHint ?? '--output vertical'} shows them all`,
          layout.width ?? Number.POSITIVE_INFINITY,
        ),
      ),
    );
  return `${out.join('\n')}\n`;
}
