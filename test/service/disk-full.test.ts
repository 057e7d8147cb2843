import { describe, expect, it } from 'vitest';
import { isDiskFull } from '../../src/support/disk-full.js';

describe('telling lake’s full disk from other failures', () => {
  it('takes Node’s, SQLite’s and DuckDB’s words for a write with no room', () => {
    expect(isDiskFull(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))).toBe(
      true,
    );
    expect(isDiskFull(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_SHMSIZE' }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toBe(true);
    expect(isDiskFull(new Error('IO Error: Could not write file "x": No space left on device'))).toBe(true);
  });

  it('leaves a source server’s own full disk, and everything else, to say what it is', () => {
    // PostgreSQL's error carries a severity, MySQL's an SQL state: their disk, not lake's.
    const postgres = Object.assign(new Error('could not write to file "base/pgsql_tmp/x": No space left on device'), {
      severity: 'ERROR',
      code: '53100',
    });
    const mysql = Object.assign(new Error('Disk full (/tmp/#sql); waiting for someone to free some space'), {
      sqlState: 'HY000',
      code: 'ER_DISK_FULL',
    });
    expect(isDiskFull(postgres)).toBe(false);
    expect(isDiskFull(mysql)).toBe(false);
    expect(isDiskFull(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_READ' }))).toBe(false);
    expect(isDiskFull(new Error('Binder Error: column "x" not found'))).toBe(false);
    expect(isDiskFull('No space left on device')).toBe(false);
  });
});
