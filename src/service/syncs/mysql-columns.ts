import type * as mysql from 'mysql2';
import { mysqlIdent, mysqlQuery } from '../connectors/mysql.js';
import type { TableTask } from './types.js';
import type { MysqlColumn } from './mysql-types.js';

/** The table's columns now, with what types them: collations, and MariaDB's JSON (a LONGTEXT with json_valid). */
export async function currentColumns(connection: mysql.Connection, table: TableTask['table']): Promise<MysqlColumn[]> {
  const rows = await mysqlQuery(
    connection,
    `SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, COLLATION_NAME, IS_NULLABLE = 'NO'
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
    [table.schema, table.name],
  );
  // MySQL 8's CHECK_CONSTRAINTS has no TABLE_NAME (and its JSON is a type of its own): none found there is right.
  const checks = await mysqlQuery(
    connection,
    'SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ?',
    [table.schema, table.name],
  ).catch(() => []);
  const clauses = new Set(checks.map(([clause]) => String(clause)));
  return rows.map(([name, columnType, dataType, collation, notNull]) => ({
    name: String(name),
    columnType: String(columnType),
    dataType: String(dataType),
    collation: collation === null ? null : String(collation),
    json: clauses.has(`json_valid(${mysqlIdent(String(name))})`),
    notNull: String(notNull) === '1',
  }));
}
