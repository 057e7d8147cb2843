import { CredentialStore } from './auth/credentials.js';
import type { Directory } from './auth/directory.js';
import { PersonalTokens } from './auth/personal-tokens.js';
import { Signer } from './files/url-signer.js';
import type { Home } from './home/home.js';
import { CatalogService } from './catalog/catalog-service.js';
import { PermissionStore } from './catalog/permissions.js';
import { IdempotencyStore } from './idempotency.js';
import { Lake } from './lake/lake.js';
import { LakeLayout } from './lake/layout.js';
import { QueryService } from './queries/query-service.js';
import { ResultReader } from './queries/result-reader.js';
import { querySettingsFromEnv, type QuerySettings } from './queries/settings.js';
import { queryObject } from './queries/views.js';

/** The domain services one API app serves; built once per home. */
export interface LakeServices {
  home: Home;
  directory: Directory;
  credentials: CredentialStore;
  personalTokens: PersonalTokens;
  signer: Signer;
  lake: Lake;
  queries: QueryService;
  resultReader: ResultReader;
  permissions: PermissionStore;
  catalog: CatalogService;
  /** Origin for links in responses when the server sits behind a proxy; otherwise each request's own. */
  publicUrl: string | undefined;
  /**
   * Lets work in flight finish for up to graceMs (default: none), stops and records what remains, then releases
   * engines. The home itself is closed by whoever opened it.
   */
  close(graceMs?: number): Promise<void>;
}

export interface ServiceOptions {
  publicUrl?: string;
  querySettings?: QuerySettings;
}

export function createServices(home: Home, options: ServiceOptions = {}): LakeServices {
  const layout = new LakeLayout(home.paths.root);
  const lake = new Lake(home.db, layout);
  const resultReader = new ResultReader();
  const permissions = new PermissionStore(home.db, home.directory);
  const queries = new QueryService(home.db, lake, new IdempotencyStore(home.db), resultReader, permissions, options.querySettings ?? querySettingsFromEnv(), queryObject);
  queries.purgeExpired();
  return {
    home,
    directory: home.directory,
    credentials: home.credentials,
    personalTokens: new PersonalTokens(home.db, home.credentials),
    signer: new Signer(home.signingSecret),
    lake,
    queries,
    resultReader,
    permissions,
    catalog: new CatalogService(lake, permissions),
    publicUrl: options.publicUrl?.replace(/\/+$/, ''),
    async close(graceMs = 0) {
      await queries.drain(graceMs);
      await resultReader.close();
    },
  };
}
