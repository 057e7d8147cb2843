/**
 * The PostgreSQL metadata store a home names cannot be reached (down, a wrong host or port). The CLI says it as the
 * store to check (exit 5, as an unavailable service), not as a failure of lake's own. The message names the store by
 * host, port and database only: never the user's password.
 */
export class MetadataStoreUnreachable extends Error {
  override readonly name = 'MetadataStoreUnreachable';
}

/** Where a metadata URL points, for messages: host, port and database, without user or password. */
export function metadataStoreName(metadataUrl: string): string {
  try {
    const url = new URL(metadataUrl);
    return `${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'LAKE_METADATA_URL';
  }
}
