import { createHash } from 'node:crypto';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createServices, type LakeServices } from '../../src/service/assembly/services.js';
import { openPrivilegedConnection, quoteLiteral } from '../../src/service/engine/duckdb.js';
import { openHome, type Home, type HomeOptions } from '../../src/service/home/home.js';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/legacy-home/', import.meta.url));

interface Expected {
  organization: string;
  analyst_token: string;
  tables: Record<string, { rows?: unknown[]; count?: number; sha256?: string }>;
  views: Record<string, { rows?: unknown[]; count?: number; sha256?: string }>;
}

/** What a table or view answers now, in the form the fixture recorded (make.mjs). */
async function answers(services: LakeServices, organizationId: string): Promise<Expected['tables']> {
  const { file } = await services.lake.catalogFile(organizationId);
  const { connection, close } = await openPrivilegedConnection({});
  try {
    await connection.run(`ATTACH ${quoteLiteral(file)} AS lake (READ_ONLY)`);
    const seen: Expected['tables'] = {};
    const names = [
      ...(await services.lake.tables.list(organizationId)),
      ...(await services.lake.views.list(organizationId)),
    ].map((o) => `${o.schema}.${o.name}`);
    for (const name of names) {
      const rows = (await connection.runAndReadAll(`SELECT * FROM lake.${name} ORDER BY ALL`)).getRowObjectsJson();
      seen[name] =
        rows.length <= 100
          ? { rows: JSON.parse(JSON.stringify(rows)) as unknown[] }
          : { count: rows.length, sha256: createHash('sha256').update(JSON.stringify(rows)).digest('hex') };
    }
    return seen;
  } finally {
    close();
  }
}

/**
 * A home made by lake's release before DuckLake (test/fixtures/legacy-home/make.mjs, commit 8938963) opened by this
 * one: its lake is converted into a DuckLake catalog on first open, and every table and view answers exactly as
 * that release answered, grants included, on SQLite and on PostgreSQL.
 */
describe('upgrading a home made before DuckLake', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function open(root: string, options: HomeOptions): Promise<{ home: Home; services: LakeServices }> {
    const home = await openHome(root, options);
    const services = await createServices(home, { rateLimits: false });
    cleanups.push(async () => {
      await services.close();
      await home.close();
    });
    return { home, services };
  }

  async function check(services: LakeServices, home: Home, expected: Expected): Promise<void> {
    const org = home.organization.id;
    expect(org).toBe(expected.organization);
    const seen = await answers(services, org);
    expect(Object.keys(seen).sort()).toEqual([...Object.keys(expected.tables), ...Object.keys(expected.views)].sort());
    for (const [name, answer] of Object.entries({ ...expected.tables, ...expected.views }))
      expect(seen[name], name).toEqual(answer);
    // The table taken out stays out; the merged table reads its newest values once per key.
    expect(await services.lake.tables.get(org, 'shop', 'gone')).toBeUndefined();
    const events = await services.lake.tables.get(org, 'shop', 'events');
    expect(events?.snapshot.rowCount).toBe(52);
    expect(events?.snapshot.columns.find((c) => c.name === '_synced_at')).toEqual({
      name: '_synced_at',
      type: 'TIMESTAMP WITH TIME ZONE',
      nullable: false,
    });
    // The grants are the same: the analyst reads shop.items and nothing else.
    const analyst = await home.credentials.authenticate(expected.analyst_token, ['pat']);
    const visible = await services.lake.visible(org, await services.permissions.accessFor(analyst));
    expect(visible.tables.map((t) => `${t.schema}.${t.name}`)).toEqual(['shop.items']);
    expect(visible.views).toEqual([]);
    // A second open converts nothing again, and a new write lands on top.
    const snapshot = await services.lake.tables.catalogVersion(org);
    await services.lake.writeTable(org, 'shop', 'after', 'SELECT 1 AS id');
    expect(await services.lake.tables.catalogVersion(org)).toBe(snapshot + 1);
  }

  it('SQLite: converts on first open and answers as before', async () => {
    const root = join(tempDir('lake-upgrade'), 'home');
    cpSync(join(FIXTURE, 'home'), root, { recursive: true });
    const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected.json'), 'utf8')) as Expected;
    const { home, services } = await open(root, {});
    await check(services, home, expected);
  }, 60_000);

  it('PostgreSQL: converts into the organization schema of the metadata database and answers as before', async () => {
    const database = await createMetadataDatabase();
    cleanups.push(database.drop);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(readFileSync(join(FIXTURE, 'metadata.sql'), 'utf8'));
    } finally {
      await client.end();
    }
    const root = join(tempDir('lake-upgrade-pg'), 'home');
    cpSync(join(FIXTURE, 'home-pg'), root, { recursive: true });
    const keys = tempDir('lake-upgrade-keys');
    for (const key of ['signing.key', 'secrets.key']) cpSync(join(FIXTURE, key), join(keys, key));
    const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected-pg.json'), 'utf8')) as Expected;
    const { home, services } = await open(root, {
      metadataUrl: database.url,
      signingKeyFile: join(keys, 'signing.key'),
      secretsKeyFile: join(keys, 'secrets.key'),
    });
    await check(services, home, expected);
    const schemas = await services.lake.catalogs.for(home.organization.id);
    expect(await schemas.metadata('version')).toBe('1.0');
  }, 60_000);
});
