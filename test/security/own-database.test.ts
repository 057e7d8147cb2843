import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type LakeApp } from '../../src/service/api/server/app.js';
import { postgresConnector } from '../../src/service/connectors/postgres.js';
import { openHome, type Home } from '../../src/service/home/home.js';
import { OwnDatabaseGuard } from '../../src/service/net/own-database.js';
import { OutboundPolicy, SERVE_DENY } from '../../src/service/net/outbound.js';
import { PostgresDelivery } from '../../src/service/sends/deliveries/postgres-delivery.js';
import { createServices, type LakeServices } from '../../src/service/assembly/services.js';
import { metadataIdentity } from '../../src/service/store/database-identity.js';
import { ADMIN_URL, createMetadataDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { expectError } from '../helpers/queries.js';

/**
 * Finding 1 of the source-side review: a member of a second organization pointed a source and a send at lake's own
 * metadata database (on PostgreSQL) and read every organization's credentials, then wrote one. Here even an
 * operator who lets sources reach loopback does not open that door: the metadata database is refused by address,
 * port and database before connecting, and by the identity the server reports once connected.
 */
describe("no source or send reaches lake's own metadata database", () => {
  let metadata: { url: string; drop(): Promise<void> };
  let home: Home;
  let services: LakeServices;
  let app: LakeApp;
  let intruder: string;
  let metadataDatabase: string;

  beforeAll(async () => {
    metadata = await createMetadataDatabase();
    metadataDatabase = new URL(metadata.url).pathname.slice(1);
    const keys = tempDir('lake-keys');
    const key = (name: string): string => {
      writeFileSync(join(keys, name), randomBytes(32).toString('hex'), { mode: 0o600 });
      return join(keys, name);
    };
    home = await openHome(join(tempDir('lake-home'), 'home'), {
      metadataUrl: metadata.url,
      signingKeyFile: key('s'),
      secretsKeyFile: key('k'),
    });
    // An operator who allows loopback sources and destinations (their own deny lists, without 127.0.0.0/8).
    const deny = SERVE_DENY.filter((entry) => !['127.0.0.0/8', '::1/128', 'localhost'].includes(entry));
    services = await createServices(home, {
      rateLimits: false,
      outbound: { sources: { allow: [], deny }, destinations: { allow: [], deny } },
    });
    app = createApp(services);
    const other = await home.directory.createOrganization('Intruders');
    const user = await home.directory.createUser(other.id, 'Mallory', 'owner');
    intruder = (
      await home.credentials.issue({
        kind: 'pat',
        organizationId: other.id,
        userId: user.id,
        name: 'm',
        scopes: ['apps:manage', 'sends:manage', 'sends:read', 'data:read', 'jobs:read'],
      })
    ).secret;
  }, 60_000);
  afterAll(async () => {
    await services?.close();
    await home?.close();
    await metadata?.drop();
  });

  const call = async (method: string, path: string, body?: object): Promise<Response> =>
    app.fetch(
      new Request(`http://local.lake${path}`, {
        method,
        headers: { Authorization: `Bearer ${intruder}`, 'Content-Type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      }),
    );

  it('a source naming the metadata database is refused, in every spelling of its address', async () => {
    const { port } = new URL(ADMIN_URL);
    for (const host of ['127.0.0.1', 'localhost', '127.0.0.2', '::ffff:127.0.0.1', '0.0.0.0', '2130706433']) {
      const response = await call('POST', '/sources', {
        connector: 'postgres',
        name: `loot ${host}`,
        host,
        user: 'postgres',
        config: { port: Number(port || 5432), database: metadataDatabase },
      });
      await expectError(response, 403, 'host_not_allowed');
    }
  });

  it('a send writing into the metadata database is refused', async () => {
    const { port } = new URL(ADMIN_URL);
    const response = await call('POST', '/sends', {
      name: 'plant a credential',
      sql: "select 'crd_x' as id",
      destination: {
        type: 'postgres',
        host: '127.0.0.1',
        user: 'postgres',
        port: Number(port || 5432),
        database: metadataDatabase,
        schema: 'public',
        table: 'credentials',
        mode: 'upsert',
        key: ['id'],
      },
    });
    await expectError(response, 403, 'host_not_allowed');
  });

  it('once connected, the identity the server reports refuses it whatever address reached it', async () => {
    // A guard whose address check cannot match (as for an alias or a forwarded port): only the identity can tell.
    const guard = OwnDatabaseGuard.forUrl(
      'postgres://postgres@metadata.invalid:1/elsewhere',
      metadataIdentity(home.db),
    );
    const { port, hostname } = new URL(ADMIN_URL);
    const settings = {
      config: { port: Number(port || 5432), database: metadataDatabase },
      secrets: { host: hostname, user: 'postgres' },
      tables: [],
      ownDatabase: guard,
    };
    await expect(postgresConnector.test?.(settings)).rejects.toMatchObject({ code: 'host_not_allowed' });
    await expect(postgresConnector.discover?.(settings)).rejects.toMatchObject({ code: 'host_not_allowed' });
    // Another database of the same server is not lake's own: it is tested as usual.
    const other = await postgresConnector.test?.({ ...settings, config: { ...settings.config, database: 'postgres' } });
    expect(other?.ok).toBe(true);

    const delivery = new PostgresDelivery(
      {
        type: 'postgres',
        port: Number(port || 5432),
        database: metadataDatabase,
        schema: 'public',
        table: 'credentials',
        mode: 'upsert',
        key: ['id'],
        ssl_mode: 'disable',
      } as never,
      { host: hostname, user: 'postgres' },
      new OutboundPolicy({ allow: [], deny: [] }, 'destinations', guard),
    );
    await expect(delivery.open([{ name: 'id', type: 'VARCHAR' }])).rejects.toMatchObject({ code: 'host_not_allowed' });
  });
});
