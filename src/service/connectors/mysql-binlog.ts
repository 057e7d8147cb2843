import type * as mysql from 'mysql2';
import { mysqlIdent, mysqlQuery } from './mysql.js';
import { CdcRefusal } from './types.js';

/** A place in a MySQL source's binary log: a file and a byte offset in it, kept as `binlog.000042:1187`. */
export interface BinlogPosition {
  file: string;
  position: number;
}

export function formatPosition(at: BinlogPosition): string {
  return `${at.file}:${at.position}`;
}

/** A kept position; undefined for text that is not one (a table tag written by another connector, say). */
export function parsePosition(text: string | undefined): BinlogPosition | undefined {
  const match = /^(.+\.\d+):(\d+)$/.exec(text ?? '');
  return match ? { file: match[1] as string, position: Number(match[2]) } : undefined;
}

/**
 * Orders two positions of one server's log: files by their sequence number (`.000042`), then offsets. Undefined
 * when the files belong to different logs (the server's log was renamed): no order holds between them.
 */
export function comparePositions(a: BinlogPosition, b: BinlogPosition): number | undefined {
  const split = (file: string): [string, number] => {
    const dot = file.lastIndexOf('.');
    return [file.slice(0, dot), Number(file.slice(dot + 1))];
  };
  const [baseA, sequenceA] = split(a.file);
  const [baseB, sequenceB] = split(b.file);
  if (baseA !== baseB) return undefined;
  return sequenceA !== sequenceB ? sequenceA - sequenceB : a.position - b.position;
}

/**
 * Whether a table's kept position can no longer be read from: its file was purged (or belongs to a log since
 * renamed), or it lies past where the log stands now (the log was reset, RESET MASTER, and its file names begin
 * again). The changes after it are gone: the table is read whole.
 */
export function positionLost(at: BinlogPosition, now: BinlogPosition, kept: ReadonlySet<string>): boolean {
  return !kept.has(at.file) || (comparePositions(at, now) ?? 1) > 0;
}

/**
 * Checks what reading changes from the binary log needs of the source: the log on, in row format with whole row
 * images, and a user that may read it. Refusals say what to change.
 */
export async function checkBinlogReady(connection: mysql.Connection): Promise<void> {
  const [row] = await mysqlQuery(connection, 'SELECT @@log_bin, @@binlog_format, @@binlog_row_image');
  const [logBin, format, image] = row ?? [];
  if (String(logBin) !== '1')
    throw new CdcRefusal(
      "the source's binary log is off: cdc needs the server started with log_bin and binlog_format=ROW (or sync the table incremental)",
    );
  if (String(format).toUpperCase() !== 'ROW')
    throw new CdcRefusal(
      `the source logs changes in ${String(format)} format: cdc needs binlog_format=ROW (SET GLOBAL binlog_format = 'ROW', and in the server's configuration)`,
    );
  if (String(image).toUpperCase() !== 'FULL')
    throw new CdcRefusal(
      `the source logs ${String(image)} row images: cdc needs binlog_row_image=FULL (SET GLOBAL binlog_row_image = 'FULL', and in the server's configuration)`,
    );
}

const PRIVILEGES =
  'GRANT REPLICATION CLIENT, REPLICATION SLAVE ON *.* to the source user (MariaDB 10.5+: BINLOG MONITOR, REPLICATION SLAVE)';

/** Where the source's binary log ends now. */
export async function currentPosition(connection: mysql.Connection): Promise<BinlogPosition> {
  // MySQL 8.4 knows only the new name, MariaDB and older MySQL only the old one.
  const rows = await mysqlQuery(connection, 'SHOW MASTER STATUS').catch((error: { code?: string }) =>
    error.code === 'ER_PARSE_ERROR' ? mysqlQuery(connection, 'SHOW BINARY LOG STATUS') : Promise.reject(error),
  );
  const [file, position] = rows[0] ?? [];
  if (!file || position === undefined || position === null)
    throw new CdcRefusal(`the source user may not read the binary log's position: ${PRIVILEGES}`);
  return { file: String(file), position: Number(position) };
}

/** The binary log files the source still keeps (older ones were purged, and their changes with them). */
export async function keptLogFiles(connection: mysql.Connection): Promise<Set<string>> {
  const rows = await mysqlQuery(connection, 'SHOW BINARY LOGS');
  return new Set(rows.map(([file]) => String(file)));
}

/** A failure of the source's privileges, told as what to grant. */
export function binlogPrivilegeRefusal(error: unknown): CdcRefusal | undefined {
  const code = (error as { code?: string }).code;
  return code === 'ER_SPECIFIC_ACCESS_DENIED_ERROR' || code === 'ER_ACCESS_DENIED_ERROR'
    ? new CdcRefusal(`the source user may not read the binary log: ${PRIVILEGES}`)
    : undefined;
}

/**
 * The named character sets of the source with one byte a character, each as its 256 characters the way the server
 * converts them to UTF-8 (MySQL's own tables: a change read from the log is then the text a copy of the row reads).
 * Character sets of several bytes a character are left out.
 */
export async function singleByteCharsets(
  connection: mysql.Connection,
  names: readonly string[],
): Promise<Map<string, string[]>> {
  const tables = new Map<string, string[]>();
  if (names.length === 0) return tables;
  const rows = await mysqlQuery(
    connection,
    `SELECT CHARACTER_SET_NAME, MAXLEN FROM information_schema.CHARACTER_SETS WHERE CHARACTER_SET_NAME IN (${names.map(() => '?').join(', ')})`,
    [...names],
  );
  const everyByte = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0')).join('');
  for (const [name, maxLength] of rows) {
    // A character set's name is a word (information_schema's own): it goes into the statement as one.
    if (String(maxLength) !== '1' || !/^\w+$/.test(String(name))) continue;
    const [row] = await mysqlQuery(
      connection,
      `SELECT CONVERT(CONVERT(UNHEX('${everyByte}') USING ${String(name)}) USING utf8mb4)`,
    );
    const characters = [...String(row?.[0] ?? '')];
    if (characters.length === 256) tables.set(String(name), characters);
  }
  return tables;
}

/**
 * Of these tables (of the connection's database), those whose rows a foreign key changes when a parent row changes
 * (ON DELETE or ON UPDATE CASCADE, SET NULL or SET DEFAULT), each with its first such constraint: InnoDB applies the
 * cascade itself, and the binary log carries no row of it. Read from SHOW CREATE TABLE of the tables that have a
 * foreign key: MariaDB shows a user who may only SELECT no row of information_schema's REFERENTIAL_CONSTRAINTS.
 */
export async function cascadingForeignKeys(
  connection: mysql.Connection,
  names: readonly string[],
): Promise<Map<string, string>> {
  if (names.length === 0) return new Map();
  const withKeys = await mysqlQuery(
    connection,
    `SELECT DISTINCT TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE
      WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL AND TABLE_NAME IN (${names.map(() => '?').join(', ')})`,
    [...names],
  );
  const found = new Map<string, string>();
  for (const [name] of withKeys) {
    const table = String(name);
    const [created] = await mysqlQuery(connection, `SHOW CREATE TABLE ${mysqlIdent(table)}`);
    for (const line of String(created?.[1] ?? '').split('\n')) {
      // `CONSTRAINT `c` FOREIGN KEY (`p`) REFERENCES `parent` (`id`) ON DELETE CASCADE`, one a line.
      const rule =
        /^\s*CONSTRAINT\s+(`(?:[^`]|``)*`).*\bFOREIGN KEY\b.*\b(ON (?:DELETE|UPDATE) (?:CASCADE|SET NULL|SET DEFAULT))\b/i.exec(
          line,
        );
      if (rule && !found.has(table)) found.set(table, `${rule[1] as string} ${rule[2] as string}`);
    }
  }
  return found;
}

/**
 * Which of these tables of the connection's database are MariaDB system-versioned tables: each change of one logs a
 * history row beside the current one, rows a SELECT (so a copy) never reads.
 */
export async function systemVersionedTables(
  connection: mysql.Connection,
  names: readonly string[],
): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await mysqlQuery(
    connection,
    `SELECT TABLE_NAME FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'SYSTEM VERSIONED' AND TABLE_NAME IN (${names.map(() => '?').join(', ')})`,
    [...names],
  );
  return new Set(rows.map(([name]) => String(name)));
}
