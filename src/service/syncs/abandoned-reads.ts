/**
 * How long, and how many bytes, a source's statement given up part-way (a staging cap, a full disk) may go on
 * arriving, read and dropped, after lake asked the server to stop it (PostgreSQL's cancel request, MySQL's `KILL
 * QUERY`). An honest server stops within milliseconds once it can write again, with at most its socket's buffers in
 * flight; one still sending past either bound ignores the stop, and its connection is closed with IGNORED_STOP.
 */
export const DISCARD_MS = 5_000;
export const DISCARD_BYTES = 64 << 20;

/** Why a connection whose server went on sending after it was told to stop was closed. */
export const IGNORED_STOP =
  'the source went on sending a table after lake stopped reading it and asked it to stop; its connection was closed';
