import type { Signer } from '../files/url-signer.js';

/**
 * Page cursors are opaque to clients: the row offset and a signature binding it to one query, so a cursor from
 * another query, or an edited one, is refused rather than silently paging somewhere else.
 */
export function encodeCursor(signer: Signer, queryId: string, offset: number): string {
  return `${offset.toString(36)}.${signer.sign('cursor', queryId, offset).slice(0, 24)}`;
}

/** The offset the cursor stands for, or undefined when it is not a cursor of this query. */
export function decodeCursor(signer: Signer, queryId: string, cursor: string): number | undefined {
  const match = /^([0-9a-z]{1,12})\.([0-9a-f]{24})$/.exec(cursor);
  if (!match) return undefined;
  const offset = parseInt(match[1] as string, 36);
  const expected = signer.sign('cursor', queryId, offset).slice(0, 24);
  return expected === match[2] ? offset : undefined;
}
