/** The job stream's timings, as the spec sets them; measured on the services' clock, which tests speed up. */
export const JOB_STREAM_TIMING = {
  /** Advertised to clients as `retry:` for reconnecting. */
  retryMs: 5000,
  /** How often durable state is read for events written by other processes. */
  pollMs: 3000,
  /** A comment line keeps proxies from closing an idle stream. */
  heartbeatMs: 25_000,
  /** Streams end shortly before the 120-second boundary; clients reconnect with Last-Event-ID. */
  closeAfterMs: 115_000,
} as const;

export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['job.succeeded', 'job.failed', 'job.cancelled']);
