import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckLakeAttachService } from '../../src/service/catalog/ducklake-attach.js';
import { LakeCatalogs } from '../../src/service/storage/ducklake/lake-catalogs.js';
import { openMetadataDb } from '../../src/service/store/database.js';
import { expectError, type Json } from '../helpers/queries.js';
import { TEST_STORE } from '../helpers/test-store.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * GET /ducklake (and `lake admin ducklake`): the statement with which DuckDB attaches the organization's lake
 * read-only. The extension cannot be loaded here, so the test checks that what the statement names is the catalog
 * lake writes: the same metadata store, schema or file, and data path.
 */
describe('attaching the lake from DuckDB', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
    await api.services.lake.writeTable(api.home.organization.id, 'shop', 'items', 'SELECT 1 AS id');
  });
  afterAll(async () => {
    await api.close();
  });

  it("tells an owner how to attach the organization's catalog, read-only, without a password", async () => {
    const org = api.home.organization.id;
    const response = await api.request('/ducklake');
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    const dataPath = `${api.services.lake.layout.tablesDir(org)}/`;
    expect(body).toMatchObject({ object: 'ducklake_attach', catalog: TEST_STORE, data_path: dataPath });
    const catalog = await api.services.lake.catalogs.for(org);
    expect(await catalog.metadata('data_path')).toBe(dataPath);
    expect(await catalog.metadata('version')).toBe('1.0');
    if (TEST_STORE === 'sqlite') {
      const file = api.services.lake.layout.ducklakeFile(org);
      expect(existsSync(file)).toBe(true);
      expect(body.metadata_schema).toBe('main');
      expect(body.attach).toBe(`ATTACH 'ducklake:sqlite:${file}' AS lake (READ_ONLY, DATA_PATH '${dataPath}')`);
      // The file holds the catalog's tables unprefixed, as the extension reads them.
      const db = await openMetadataDb(file);
      try {
        expect(await db.get("SELECT value FROM ducklake_metadata WHERE key = 'version'")).toEqual({ value: '1.0' });
      } finally {
        await db.close();
      }
    } else {
      const schema = LakeCatalogs.metadataSchema(org);
      const url = new URL(api.home.metadataUrl as string);
      expect(body.metadata_schema).toBe(schema);
      expect(body.attach).toMatch(
        new RegExp(
          `^ATTACH 'ducklake:postgres:dbname=${url.pathname.slice(1)} host=${url.hostname}( port=\\d+)? user=\\w+' AS lake \\(READ_ONLY, METADATA_SCHEMA '${schema}', DATA_PATH '${dataPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'\\)$`,
        ),
      );
      expect(body.attach).not.toMatch(/password/i);
    }
  });

  it("names no secret and no file of the server's, whatever the metadata URL carries", async () => {
    const url =
      'postgres://lake:s3cret@db.internal:6432/lakemeta?sslmode=require&password=qpw-7731&sslpassword=keypass-5519&passfile=/etc/lake/pgpass&sslkey=/etc/lake/client.key&sslcert=/etc/lake/client.crt&sslrootcert=/etc/lake/ca.crt&application_name=lake';
    const attach = new DuckLakeAttachService(api.home.directory, api.services.lake.layout, url);
    const principal = await api.services.credentials.authenticate(api.home.ownerToken, ['pat']);
    const body = await attach.describe(principal);
    expect(body.attach).toMatch(
      /^ATTACH 'ducklake:postgres:dbname=lakemeta host=db\.internal port=6432 user=lake sslmode=require application_name=lake' AS lake/,
    );
    // Values no data path can hold by chance (the test's folder has a random name: `p2` was in one).
    expect(body.attach).not.toMatch(/s3cret|qpw-7731|keypass-5519|passfile|pgpass|\/etc\/lake/);
  });

  it('is not told to members or keys: 403 owner_required', async () => {
    const org = api.home.organization.id;
    const member = await api.home.directory.createUser(org, 'Member', 'member');
    const token = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: org,
        userId: member.id,
        name: 'm',
        scopes: ['data:read'],
      })
    ).secret;
    await expectError(await api.request('/ducklake', { token }), 403, 'owner_required');
  });
});
