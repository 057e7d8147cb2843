import { SYNCED_AT } from '../sources/lake-names.js';

/**
 * What an incremental merge is told when no row's cursor moved past its last value (the greatest value now is the
 * one the previous sync saw): the rows read are those at it, read again because the cursor is `>=`, and if the
 * table has them as they are, but for `_synced_at`, they change nothing (no snapshot, no layer; MergeInput).
 */
export function rereadOnly(
  incremental: boolean,
  newCursor: string | null,
  previousCursor: string | null | undefined,
): { ignoredWhenCompared?: readonly string[] } {
  return incremental && newCursor !== null && newCursor === previousCursor ? { ignoredWhenCompared: [SYNCED_AT] } : {};
}
