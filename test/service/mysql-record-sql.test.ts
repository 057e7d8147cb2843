import { describe, expect, it } from 'vitest';
import { csvRecordSql, planMysqlColumn, type MysqlColumn } from '../../src/service/syncs/mysql-types.js';

/**
 * The server-made CSV record (csvRecordSql): text already stored in utf8mb4 is quoted as it is, anything else is
 * converted to utf8mb4 first, so every value arrives in one character set under one collation.
 */
const column = (name: string, columnType: string, collation: string | null, notNull = false): MysqlColumn => ({
  name,
  columnType,
  dataType: columnType.replace(/\(.*$/, ''),
  collation,
  json: false,
  notNull,
});

describe('the SQL of a MySQL record', () => {
  it('converts only text that is not stored in utf8mb4, and never a number', () => {
    const columns = [
      column('id', 'bigint(20)', null, true),
      column('name', 'varchar(40)', 'utf8mb4_general_ci', true),
      column('old', 'varchar(40)', 'latin1_swedish_ci'),
      column('three', 'varchar(40)', 'utf8mb3_general_ci'),
      column('raw', 'varbinary(8)', null),
      column('mood', "enum('a','b')", 'utf8mb4_general_ci'),
    ];
    const sql = csvRecordSql(
      columns.map((c) => planMysqlColumn(c)),
      columns,
    );
    expect(sql).toContain("CONCAT('\"', REPLACE(`name` COLLATE utf8mb4_bin, '\"', '\"\"'), '\"')");
    expect(sql).toContain('CONVERT(`old` USING utf8mb4) COLLATE utf8mb4_bin');
    expect(sql).toContain('CONVERT(`three` USING utf8mb4) COLLATE utf8mb4_bin');
    // An expression (HEX) is in the connection's character set, whatever the column's: converted.
    expect(sql).toContain('CONVERT(HEX(`raw`) USING utf8mb4)');
    expect(sql).toContain('CONVERT(`mood` USING utf8mb4)');
    expect(sql.startsWith('CONCAT(`id`, ')).toBe(true);
    // Without the columns' facts every text is converted, as before.
    expect(csvRecordSql(columns.map((c) => planMysqlColumn(c)))).toContain('CONVERT(`name` USING utf8mb4)');
  });
});
