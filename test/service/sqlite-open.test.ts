import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { waitFor } from '../helpers/wait-for.js';

const SQLite = createRequire(import.meta.url)('better-sqlite3') as typeof Database;

describe('opening the SQLite store', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('waits, instead of failing with "database is locked", while another process writes the new file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lake-sqlite-open-'));
    dirs.push(dir);
    const file = join(dir, 'metadata.sqlite');
    // A file still in rollback mode, as a new home's is while the first process that opened it is converting it.
    const first = new SQLite(file);
    first.exec('CREATE TABLE started (at INTEGER)');
    first.close();
    // Another process in a write transaction on it for a while: SQLite refuses the switch to WAL at once, without
    // its busy handler, which is how one of several processes opening one new home failed. It says when it commits.
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `const c = new (require('better-sqlite3'))(process.argv[1]); c.exec('BEGIN IMMEDIATE');
         c.prepare('INSERT INTO started VALUES (1)').run(); console.log('writing');
         setTimeout(() => { c.exec('COMMIT'); c.close(); console.log('committed ' + Date.now()); }, 1500);`,
        file,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let said = '';
    writer.stdout.setEncoding('utf8').on('data', (text: string) => (said += text));
    try {
      expect(
        await waitFor(
          () => said,
          (text) => text.includes('writing'),
          10_000,
        ),
      ).toContain('writing');
      const opening = Date.now();
      const db = SqliteMetadataDb.open(file);
      try {
        await once(writer, 'close');
        // The store was opened while the other process still held its write (else this test proves nothing), and
        // the open waited for it instead of failing.
        const committed = Number(/committed (\d+)/.exec(said)?.[1]);
        expect(committed).toBeGreaterThan(opening);
        expect(db.connection.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(await db.get('SELECT count(*) AS n FROM started')).toEqual({ n: 1 });
      } finally {
        await db.close();
      }
    } finally {
      writer.kill();
    }
  });
});
