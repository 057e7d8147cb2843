// What the sync benches share: the PostgreSQL server they use (LAKE_TEST_PG_URL), its drivers, and one-off queries.
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const require = createRequire(import.meta.url);
export const pg = require('pg');
const { to } = require('pg-copy-streams');

export const adminUrl = process.env.LAKE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The connection string of a database on the bench's server. */
export function databaseUrl(database) {
  const url = new URL(adminUrl);
  if (database) url.pathname = `/${database}`;
  return url.toString();
}

/** Runs SQL on its own connection, as the server's admin, in the database named (or the default one). */
export async function admin(sql, database) {
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Streams `COPY … TO STDOUT` over the client and throws the bytes away: the raw speed a sync is measured against. */
export async function copyAndDiscard(client, copySql) {
  await pipeline(client.query(to(copySql)), new Writable({ write: (_c, _e, done) => done() }));
}

/** The `--config` arguments of `lake sources create --connector postgres` for a database on the bench's server. */
export function sourceConfigArgs(database) {
  const url = new URL(adminUrl);
  return [
    '--config',
    `host=${url.hostname}`,
    '--config',
    `port=${url.port || 5432}`,
    '--config',
    `database=${database}`,
    '--config',
    `user=${url.username || 'postgres'}`,
  ];
}

/** `lake sources create` arguments for a source named `name` over a database on the bench's server, printing JSON. */
export function createPostgresSourceArgs(name, database) {
  return [
    'sources',
    'create',
    '--connector',
    'postgres',
    '--name',
    name,
    ...sourceConfigArgs(database),
    '--no-password',
    '--json',
  ];
}
