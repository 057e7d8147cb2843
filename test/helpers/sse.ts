import { assertEventMatchesContract } from './contract-check.js';

export interface SseItem {
  kind: 'event' | 'comment' | 'retry';
  id?: string;
  event?: string;
  data?: Record<string, unknown>;
  text?: string;
  /** Real milliseconds since the stream was opened (or since the `since` given to readSse). */
  at: number;
}

/**
 * Reads a text/event-stream body into items as they arrive, until it ends or `stop` says so. Each item's `at`
 * counts from `since` (a `performance.now()` taken before the request, to time what the server scheduled from its
 * start) or else from when reading began, which is later by however long the response took to arrive.
 */
export async function readSse(
  response: Response,
  stop: (items: SseItem[]) => boolean = () => false,
  signal?: AbortController,
  since?: number,
): Promise<SseItem[]> {
  const items: SseItem[] = [];
  const opened = since ?? performance.now();
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const at = performance.now() - opened;
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) items.push({ kind: 'comment', text: line.slice(1).trim(), at });
        else {
          const colon = line.indexOf(':');
          fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
        }
      }
      if (fields.retry !== undefined) items.push({ kind: 'retry', text: fields.retry, at });
      if (fields.data !== undefined) {
        const data = JSON.parse(fields.data) as Record<string, unknown>;
        assertEventMatchesContract(fields.event, data);
        items.push({ kind: 'event', id: fields.id, event: fields.event, data, at });
      }
    }
    if (stop(items)) {
      signal?.abort();
      await reader.cancel().catch(() => {});
      break;
    }
  }
  return items;
}
