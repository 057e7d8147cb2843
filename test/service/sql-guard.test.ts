import { describe, expect, it } from 'vitest';
import { guardSql, MAX_SQL_LENGTH } from '../../src/service/engine/sql-guard.js';
import { tokenize } from '../../src/service/engine/sql-tokenizer.js';
import { LakeServiceError } from '../../src/service/core/errors.js';

function codeOf(sql: string): string | undefined {
  try {
    guardSql(sql);
    return undefined;
  } catch (error) {
    return error instanceof LakeServiceError ? error.code : 'thrown';
  }
}

describe('SQL tokenizer', () => {
  it('reads every kind of literal and comment', () => {
    const tokens = tokenize(
      `select 'it''s', e'a\\'b', $$x;y$$, $t$ $$ $t$, "we""ird", $1 -- c;\n /* a /* b */ c; */ 1.5e3;`,
    );
    expect(tokens.filter((t) => t.kind === 'string').map((t) => t.value)).toEqual(["it's", "a'b", 'x;y', ' $$ ']);
    expect(tokens.find((t) => t.kind === 'quoted_identifier')?.value).toBe('we"ird');
    expect(tokens.filter((t) => t.kind === 'semicolon')).toHaveLength(1);
    expect(tokens.map((t) => t.kind)).toContain('parameter');
  });

  it('refuses unterminated literals and comments instead of guessing', () => {
    for (const sql of ["select 'abc", 'select "abc', 'select $$abc', 'select 1 /* open /* nested */']) {
      expect(codeOf(sql)).toBe('parameter_invalid');
    }
  });
});

describe('SQL guard', () => {
  it('lets ordinary read-only SQL through', () => {
    for (const sql of [
      'select 1',
      'select 1;',
      "SELECT * FROM lake.demo.orders WHERE status = 'delete' ORDER BY 1 LIMIT 5",
      'with t as (select 1 as x) select * from t',
      'from lake.demo.orders select count(*)',
      'select "update", "set" from lake.demo.orders',
      "select * from lake.demo.orders where email like '%@example.com' -- comment: drop table\n",
      'select query, start, comment, release from (select 1 as query, 2 as start, 3 as comment, 4 as release)',
      'select * exclude (status) replace (total * 2 as total) from lake.demo.orders',
      'describe lake.demo.orders',
      'select read_count, delta_amount, last_scan, parquet_size from (select 1 as read_count, 2 as delta_amount, 3 as last_scan, 4 as parquet_size)',
    ]) {
      expect({ sql, code: codeOf(sql) }).toEqual({ sql, code: undefined });
    }
  });

  it('gives each restriction its code', () => {
    expect(codeOf('select 1; select 2')).toBe('multiple_statements');
    expect(codeOf('select 1;;')).toBe('multiple_statements');
    expect(codeOf('delete from t')).toBe('write_not_allowed');
    expect(codeOf("select * from read_parquet('x')")).toBe('forbidden_function');
    expect(codeOf("select 'read_parquet'")).toBe('forbidden_function');
    expect(codeOf("select 'S3://a/b'")).toBe('forbidden_function');
    expect(codeOf('x'.repeat(MAX_SQL_LENGTH + 1))).toBe('sql_too_long');
    expect(codeOf(`select ${' '.repeat(MAX_SQL_LENGTH - 10)}1`)).toBeUndefined();
    expect(codeOf('')).toBe('parameter_invalid');
  });

  it('checks the length first, then statements, then functions, then keywords', () => {
    expect(codeOf(`select 1; drop table x ${' '.repeat(MAX_SQL_LENGTH)}`)).toBe('sql_too_long');
    expect(codeOf("select read_csv('x'); drop table y")).toBe('multiple_statements');
    expect(codeOf("insert into t select * from read_csv('x')")).toBe('forbidden_function');
  });

  it('returns the statement without its trailing semicolon, for wrapping', () => {
    expect(guardSql('select 1 -- done\n;').statement).toBe('select 1 -- done\n');
  });
});

describe('statement parameters', () => {
  it('refuses $1, ?, $name and parameters inside lists and structs, before any engine sees them', () => {
    for (const sql of [
      'select $1',
      'select ?',
      'select $x',
      'select [?]',
      "select {'a': ?}",
      'select * from t where a = $2',
    ]) {
      expect(codeOf(sql), sql).toBe('parameter_invalid');
    }
  });

  it('leaves the same characters alone inside literals, identifiers, dollar quotes and comments', () => {
    for (const sql of [
      "select '$1 ?' as s",
      'select "?" from t',
      'select $$ ? $$',
      'select 1 -- $1 ?',
      'select 1 /* ? */',
      'select a$b from t',
    ]) {
      expect(codeOf(sql), sql).toBeUndefined();
    }
  });
});
