/** What a statement in the binary log does to a whole table: empties it (`T`), or gives it rows from elsewhere (`R`). */
export interface TableEffect {
  /** `schema.table`; EVERY_TABLE for a statement that may have changed any of them. */
  table: string;
  effect: 'T' | 'R';
}

// A quoted name as an unrolled loop (runs of other characters, then doubled backticks), so a name of millions of
// characters is one step per run, not a choice kept per character.
/** The table of an effect that may touch any table (statementEffects). */
export const EVERY_TABLE = '*';

/** The most names a change logged as a statement is read for, one by one (statementEffects). */
const MAX_NAMES = 10_000;

const NAME = String.raw`(?:\x60[^\x60]*(?:\x60\x60[^\x60]*)*\x60|[\w$]+)`;
const QUALIFIED = String.raw`${NAME}(?:\s*\.\s*${NAME})?`;
const AFTER_NAME = String.raw`(?=\s|\(|$)`;
/** MariaDB's lock wait of a DDL statement (`WAIT 5`, `NOWAIT`), written after a table's name. */
const WAIT = String.raw`(?:wait\s+\d+|nowait)`;

/**
 * The tables a DDL statement logged in the binary log empties or replaces (the log carries no row for them): a
 * TRUNCATE, a DROP TABLE, or a CREATE TABLE (OR REPLACE) leaves the table empty before the row changes after it (a
 * CREATE … SELECT logs its rows after); a RENAME (RENAME TABLE, ALTER TABLE … RENAME) moves another table's rows in
 * or this one's out, and a partition dropped, truncated or exchanged (or a tablespace imported) takes rows out or
 * brings them in, which no change says, so the table must be read whole. `schema` is the statement's default
 * database. CREATE TABLE IF NOT EXISTS changes nothing that exists, and temporary tables are not logged.
 */
export function statementEffects(statement: string, schema: string): TableEffect[] {
  const text = statement
    .replace(/\/\*.*?\*\//gs, ' ')
    .replace(/;\s*$/, '')
    .trim();
  const qualify = (name: string): string => {
    const parts = [...name.matchAll(new RegExp(NAME, 'g'))].map(([part]) =>
      part.startsWith('`') ? part.slice(1, -1).replace(/``/g, '`') : part,
    );
    return parts.length === 2 ? `${parts[0]}.${parts[1]}` : `${schema}.${parts[0]}`;
  };
  const names = (list: string): string[] => [...list.matchAll(new RegExp(QUALIFIED, 'g'))].map(([n]) => qualify(n));
  const each = (tables: string[], effect: 'T' | 'R'): TableEffect[] => tables.map((table) => ({ table, effect }));
  // An XA transaction's rows are logged when it is prepared: one rolled back later took back rows the log gave, and
  // which tables they were in is not said again.
  if (/^xa\s+rollback\b/i.test(text)) return [{ table: EVERY_TABLE, effect: 'R' }];
  // A change logged as a statement (a session that set binlog_format = STATEMENT, which the server's ROW format does
  // not stop) carries no row: every table it names is read whole.
  if (/^(?:insert|replace|update|delete|load\s+(?:data|xml))\b/i.test(text)) {
    // Each name once; a statement of millions of values names too many to tell apart, and may have changed any.
    const named = new Set<string>();
    for (const [name] of text.matchAll(new RegExp(QUALIFIED, 'g'))) {
      named.add(qualify(name));
      if (named.size > MAX_NAMES) return [{ table: EVERY_TABLE, effect: 'R' }];
    }
    return each([...named], 'R');
  }
  let match = new RegExp(String.raw`^truncate\s+(?:table\s+)?(${QUALIFIED})(?:\s+${WAIT})?$`, 'i').exec(text);
  if (match) return each([qualify(match[1] as string)], 'T');
  match = /^drop\s+table\s+(?:if\s+exists\s+)?/i.exec(text);
  if (match) {
    // Its list is read name by name: one pattern over a list of a million names (a statement the source may log)
    // ran out of stack, and failed every sync that read past it.
    const listed = nameList(text, match[0].length);
    // MariaDB's WAIT n / NOWAIT, then RESTRICT or CASCADE (which change nothing), may follow the list.
    if (
      listed &&
      new RegExp(String.raw`^\s*(?:${WAIT}\s*)?(?:(?:restrict|cascade)\s*)?$`, 'i').test(text.slice(listed.end))
    )
      return each(listed.names.map(qualify), 'T');
    return [];
  }
  match = new RegExp(
    String.raw`^create\s+(or\s+replace\s+)?table\s+(if\s+not\s+exists\s+)?(${QUALIFIED})${AFTER_NAME}`,
    'i',
  ).exec(text);
  if (match) return match[2] ? [] : each([qualify(match[3] as string)], 'T');
  match = /^rename\s+tables?\s+(?:if\s+exists\s+)?(.*)$/is.exec(text);
  if (match)
    return each(
      names(
        (match[1] as string).replace(new RegExp(String.raw`\s+${WAIT}(?=\s)`, 'gi'), ' ').replace(/\s+to\s+/gi, ', '),
      ),
      'R',
    );
  match = new RegExp(
    String.raw`^alter\s+(?:online\s+)?(?:ignore\s+)?table\s+(?:if\s+exists\s+)?(${QUALIFIED})${AFTER_NAME}(.*)$`,
    'is',
  ).exec(text);
  const renamed =
    match &&
    new RegExp(String.raw`\brename\s+(?!column\b|index\b|key\b|constraint\b)(?:to\s+|as\s+)?(${QUALIFIED})`, 'i').exec(
      match[2] as string,
    );
  if (match && renamed) return each([qualify(match[1] as string), qualify(renamed[1] as string)], 'R');
  // Partitions dropped, emptied or swapped with another table's rows (a common way to let old data go), and a
  // tablespace imported: rows go or come with no row event, so the table (and the one swapped in) is read whole.
  const rest = (match?.[2] as string | undefined) ?? '';
  if (match && /\b(?:drop|truncate)\s+partition\b|\bimport\s+(?:partition\s+\S+\s+)?tablespace\b/i.test(rest))
    return each([qualify(match[1] as string)], 'R');
  const exchanged =
    match && new RegExp(String.raw`\bexchange\s+partition\s+${NAME}\s+with\s+table\s+(${QUALIFIED})`, 'i').exec(rest);
  if (match && exchanged) return each([qualify(match[1] as string), qualify(exchanged[1] as string)], 'R');
  return [];
}

/** The names of a comma-separated list of table names from `start`, and where it ends; undefined when none is there. */
function nameList(text: string, start: number): { names: string[]; end: number } | undefined {
  const name = new RegExp(String.raw`\s*(${QUALIFIED})\s*`, 'y');
  const names: string[] = [];
  let at = start;
  for (;;) {
    name.lastIndex = at;
    const found = name.exec(text);
    // None at the start, or none after a comma: no list.
    if (!found) return undefined;
    names.push(found[1] as string);
    at = name.lastIndex;
    if (text[at] !== ',') return { names, end: at };
    at++;
  }
}
