import type { LakeClient } from '../../service/client/lake-client.js';

export interface QueryPage {
  object: 'query';
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  created: number;
  duration_ms?: number | null;
  row_count?: number | null;
  columns?: string[];
  data?: Record<string, unknown>[];
  has_more?: boolean;
  next_cursor?: string | null;
  files?: { url: string; bytes: number; expires: number }[];
  error?: { code?: string; message: string };
}

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Remote polling: 1 s at first, backing off to 2 s for long queries, as the spec recommends. */
export function pollDelayMs(attempt: number): number {
  return Math.min(2000, 1000 + attempt * 250);
}

export interface WaitOptions {
  mode: 'local' | 'remote';
  /** Give up (and return the running query) after this many milliseconds; undefined waits for ever. */
  timeoutMs?: number;
  /** Extra query parameters for every poll, so the final one already carries the first page. */
  query?: Record<string, string | number>;
  /** Stops waiting (returning the latest state) when aborted. */
  signal?: AbortSignal;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Told the status after every poll that has not finished (queued, running), for a live display. */
  onStatus?: (status: QueryPage['status']) => void;
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

/**
 * Polls a query until it finishes or the time runs out. The local lake is asked to hold each request until the
 * query finishes (`wait`), so nothing sleeps; a remote service is polled every 1–2 s.
 */
export async function waitForQuery(client: LakeClient, id: string, options: WaitOptions): Promise<QueryPage> {
  const sleep = options.sleep ?? defaultSleep;
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const remaining = deadline - Date.now();
    const wait = options.mode === 'local' ? Math.max(0, Math.min(30, Math.floor(remaining / 1000))) : 0;
    const page = await client.get<QueryPage>(`/queries/${encodeURIComponent(id)}`, { ...options.query, ...(wait > 0 ? { wait } : {}) });
    if (TERMINAL.has(page.status) || options.signal?.aborted) return page;
    options.onStatus?.(page.status);
    const left = deadline - Date.now();
    if (left <= 0) return page;
    if (options.mode === 'remote') await sleep(Math.min(pollDelayMs(attempt), left), options.signal);
    else if (wait === 0) await sleep(Math.min(50, left), options.signal);
  }
}
