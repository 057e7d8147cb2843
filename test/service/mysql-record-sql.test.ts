import { describe, expect, it } from 'vitest';
import { planMysqlColumn, recordSelect, type MysqlColumn } from '../../src/service/syncs/mysql-types.js';

/**
 * What a MySQL read selects (recordSelect): each column as its plan selects it, with no record built by the server,
 * and which fields lake quotes when it makes the record: text, never a number or a date.
 */
const column = (name: string, columnType: string, collation: string | null): MysqlColumn => ({
  name,
  columnType,
  dataType: columnType.replace(/\(.*$/, ''),
  collation,
  json: false,
  notNull: false,
});

describe('the SQL of a MySQL read', () => {
  it('selects every column as its plan says, and quotes text alone', () => {
    const columns = [
      column('id', 'bigint(20)', null),
      column('name', 'varchar(40)', 'utf8mb4_general_ci'),
      column('old', 'varchar(40)', 'latin1_swedish_ci'),
      column('raw', 'varbinary(8)', null),
      column('mood', "enum('a','b')", 'utf8mb4_general_ci'),
      column('amount', 'decimal(12,2)', null),
      column('at', 'datetime(3)', null),
      column('flags', 'bit(3)', null),
      column('doc', 'json', 'utf8mb4_bin'),
    ];
    const { sql, quoted } = recordSelect(columns.map((c) => planMysqlColumn(c)));
    expect(sql).toBe('`id`, `name`, `old`, HEX(`raw`), `mood`, `amount`, `at`, `flags` + 0, `doc`');
    expect(sql).not.toMatch(/CONCAT|REPLACE|IFNULL|CONVERT/);
    expect(quoted).toEqual([false, true, true, true, true, false, false, false, true]);
  });
});
