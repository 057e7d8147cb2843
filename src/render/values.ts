/** How one value reads as text in csv, tsv, table and markdown output. JSON formats keep the value as is. */
export function valueToText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

export function csvField(value: unknown): string {
  const text = valueToText(value);
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** TSV in the PostgreSQL text style: tabs, newlines and backslashes escaped, so every row stays one line. */
export function tsvField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  return valueToText(value).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

export function markdownField(value: unknown): string {
  return valueToText(value).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}
