/**
 * What to check when a source's database could not be used. The API gives only the reason's code (never a host,
 * user or driver message, docs/api.md), so the CLI says what each one asks of the person fixing the source.
 */
export function whatToCheck(reason: string | null | undefined, id: string): string {
  switch (reason) {
    case 'unreachable':
      return `check its host and port (lake sources update ${id} --config host=… --config port=…) and that the server takes connections from this machine`;
    case 'timeout':
      return `the server did not answer in time: check its host and port (lake sources update ${id} --config host=… --config port=…) and any firewall on the way`;
    case 'authentication_failed':
      return `check its user and password (lake sources update ${id} --config user=… --password-stdin)`;
    case 'database_not_found':
      return `check its database's name (lake sources update ${id} --config database=…)`;
    case 'permission_denied':
      return `the user may connect but not read every enabled table: GRANT it SELECT on them, or turn a table off (lake sources update ${id} --disable schema.table)`;
    case 'tls_required':
      return `the server asks for TLS: lake sources update ${id} --config ssl_mode=require (or verify-full)`;
    default:
      return `run lake sources test ${id} again; if it fails the same way, the server's own log says why`;
  }
}
