/**
 * A snapshot's `changes_made` as the DuckLake extension writes and parses it (ducklake_transaction_changes.cpp,
 * v1.5-variegata): entries `type:value` joined by commas outside quotes; a name quoted with `"` (doubled inside);
 * a created table or view named with its schema, `"schema"."name"`; other changes name an id.
 */

/** A name as changes_made quotes it. */
export const quotedName = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A created table's or view's value: `"schema"."name"`. */
export const qualifiedName = (schema: string, name: string): string => `${quotedName(schema)}.${quotedName(name)}`;

/** The entries of a changes_made text, split on the commas outside quotes. */
export function changeEntries(changesMade: string): { type: string; value: string }[] {
  const entries: { type: string; value: string }[] = [];
  let start = 0;
  let inQuotes = false;
  for (let i = 0; i <= changesMade.length; i++) {
    if (i === changesMade.length || (!inQuotes && changesMade[i] === ',')) {
      const entry = changesMade.slice(start, i);
      const colon = entry.indexOf(':');
      if (entry !== '') entries.push({ type: entry.slice(0, colon), value: entry.slice(colon + 1) });
      start = i + 1;
    } else if (changesMade[i] === '"') inQuotes = !inQuotes;
  }
  return entries;
}

/** Whether an entry names a created table or view by its name alone (`"orders"`), as lake wrote before. */
export function isUnqualifiedCreation(entry: { type: string; value: string }): boolean {
  return (entry.type === 'created_table' || entry.type === 'created_view') && /^"(?:[^"]|"")*"$/.test(entry.value);
}

/** The name of an unqualified creation's value (`"a ""b"""` → `a "b"`). */
export const unquotedName = (value: string): string => value.slice(1, -1).replace(/""/g, '"');
