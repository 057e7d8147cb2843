/**
 * The metadata store cannot be reached (PostgreSQL down, restarting, out of connections). Work is refused with a
 * retryable 503 rather than failed: nothing was changed, and the pool reconnects by itself.
 */
export class MetadataUnavailableError extends Error {
  constructor(cause: unknown) {
    super('The metadata store is unavailable.', { cause });
    this.name = 'MetadataUnavailableError';
  }
}

// Connection-level failures: refused, reset, timed out, and PostgreSQL's own shutdown and start-up codes
// (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 08xxx connection exceptions, 53300 too
// many connections).
const NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);
const SQLSTATES = /^(08|57P0[123]|53300)/;

export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof MetadataUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NODE_CODES.has(code) || SQLSTATES.test(code))) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
    error.message,
  );
}
