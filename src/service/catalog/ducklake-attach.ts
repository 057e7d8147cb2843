import type { Directory } from '../auth/directory.js';
import type { Principal } from '../auth/principal.js';
import { LakeServiceError } from '../core/errors.js';
import { quoteLiteral } from '../engine/duckdb.js';
import { LakeCatalogs } from '../storage/ducklake/lake-catalogs.js';
import type { LakeLayout } from '../storage/layout.js';

/** How another engine attaches an organization's lake: DuckDB's statement and its parts (docs/operations.md). */
export interface DuckLakeAttach {
  catalog: 'sqlite' | 'postgres';
  attach: string;
  /** Where the catalog's tables are: the PostgreSQL schema, or `main` of the SQLite file. */
  metadataSchema: string;
  /** The folder the catalog's data and delete file paths are relative to. */
  dataPath: string;
}

/**
 * What a metadata URL may carry that the statement never shows: secrets (a password, an SSL key's passphrase), and
 * files of the server's own (its password file, client key and certificates), which a reader elsewhere has its own of.
 */
const SERVER_ONLY = /pass|^ssl(key|cert|rootcert|crl|crldir)$/i;

/**
 * The connection string DuckDB's postgres extension takes (libpq's key=value form), without a password or the
 * server's own files: the reader supplies its credentials as for psql (PGPASSWORD, ~/.pgpass).
 */
function libpqConninfo(metadataUrl: string): string {
  const url = new URL(metadataUrl);
  const quote = (value: string): string => (/^[\w./:-]+$/.test(value) ? value : `'${value.replace(/['\\]/g, '\\$&')}'`);
  const parts: [string, string][] = [['dbname', decodeURIComponent(url.pathname.slice(1)) || 'postgres']];
  if (url.hostname) parts.push(['host', decodeURIComponent(url.hostname).replace(/^\[|\]$/g, '')]);
  if (url.port) parts.push(['port', url.port]);
  if (url.username) parts.push(['user', decodeURIComponent(url.username)]);
  for (const [key, value] of url.searchParams) if (!SERVER_ONLY.test(key)) parts.push([key, value]);
  return parts.map(([key, value]) => `${key}=${quote(value)}`).join(' ');
}

/**
 * The statement with which DuckDB (with its ducklake extension) attaches the caller's organization's lake read-only.
 * It names where lake's metadata and files live, so only the organization's owners and admins are told it; lake
 * stays the only writer (the attach is READ_ONLY).
 */
export class DuckLakeAttachService {
  constructor(
    private readonly directory: Directory,
    private readonly layout: LakeLayout,
    private readonly metadataUrl: string | undefined,
  ) {}

  async describe(principal: Principal): Promise<DuckLakeAttach> {
    const user = principal.userId ? await this.directory.user(principal.userId) : undefined;
    if (!user || user.organizationId !== principal.organizationId || !['owner', 'admin'].includes(user.role))
      throw new LakeServiceError(
        'owner_required',
        "Only owners or admins of the organization, through a personal access token, may see where its lake's catalog lives.",
      );
    const dataPath = `${this.layout.files.urlOf(this.layout.tablesDir(principal.organizationId))}/`;
    if (this.metadataUrl !== undefined) {
      const metadataSchema = LakeCatalogs.metadataSchema(principal.organizationId);
      return {
        catalog: 'postgres',
        metadataSchema,
        dataPath,
        attach: `ATTACH ${quoteLiteral(`ducklake:postgres:${libpqConninfo(this.metadataUrl)}`)} AS lake (READ_ONLY, METADATA_SCHEMA ${quoteLiteral(metadataSchema)}, DATA_PATH ${quoteLiteral(dataPath)})`,
      };
    }
    return {
      catalog: 'sqlite',
      metadataSchema: 'main',
      dataPath,
      attach: `ATTACH ${quoteLiteral(`ducklake:sqlite:${this.layout.ducklakeFile(principal.organizationId)}`)} AS lake (READ_ONLY, DATA_PATH ${quoteLiteral(dataPath)})`,
    };
  }
}
