import type { Clock } from '../core/clock.js';

export interface RateLimitSettings {
  perCaller: number;
  perOrganization: number;
  /** Failed authentications a client address may make a minute before it must wait (0: no limit). */
  failedAuthPerAddress?: number;
}

/** 120 per caller and 600 per organization a minute (the spec), or LAKE_RATE_LIMIT_PER_CALLER / _PER_ORG; 0 turns a limit off. */
export function rateLimitsFromEnv(env: Record<string, string | undefined>): RateLimitSettings {
  const read = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0)
      throw new Error(`${name} must be a whole number (0 turns the limit off), not '${raw}'.`);
    return value;
  };
  return {
    perCaller: read('LAKE_RATE_LIMIT_PER_CALLER', 120),
    perOrganization: read('LAKE_RATE_LIMIT_PER_ORG', 600),
    failedAuthPerAddress: read('LAKE_RATE_LIMIT_FAILED_AUTH', 20),
  };
}

export interface Admission {
  allowed: boolean;
  /** Seconds until the request would be admitted (0 when it is). */
  retryAfterSeconds: number;
  caller: { limit: number; remaining: number };
  organization: { limit: number; remaining: number };
}

export const WINDOW_MS = 60_000;

/** Bursts of failed authentications the audit log records a minute, per process (the rest are refused alike). */
export const FAILED_BURSTS_AUDITED = 60;

/** A budget to spend one request from: its key and the time each request pushes its arrival time on by. */
export interface RateCell {
  key: string;
  intervalMs: number;
}

/** A cell's arrival time after one more request at `now`; the request fits when that is within a window of now. */
export function nextArrival(storedTat: number | undefined, now: number, intervalMs: number): number {
  return Math.max(storedTat ?? now, now) + intervalMs;
}

/** What an admission found and did: whether every cell had room (and so each was advanced), and each cell's arrival time before. */
export interface CellAdmission {
  admitted: boolean;
  before: ReadonlyMap<string, number>;
}

/**
 * Where each key's theoretical arrival time lives: this process's memory (one process), or the metadata store,
 * so that replicas share one budget per caller and organization.
 */
export interface RateCells {
  /**
   * Spends one request from every cell when each has room at `now` (nextArrival within WINDOW_MS of now), or from
   * none, as one step that no other admission of the same cells interleaves with.
   */
  admit(cells: readonly RateCell[], now: number): Promise<CellAdmission>;
}

/** One process's cells. */
export class MemoryRateCells implements RateCells {
  private readonly tat = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  async admit(cells: readonly RateCell[], now: number): Promise<CellAdmission> {
    return this.update(
      cells.map((cell) => cell.key),
      (before) => {
        const next = cells.map((cell) => [cell.key, nextArrival(before.get(cell.key), now, cell.intervalMs)] as const);
        const admitted = next.every(([, tat]) => tat - WINDOW_MS <= now);
        return { result: { admitted, before }, write: new Map(admitted ? next : []) };
      },
    );
  }

  /** Reads the keys' arrival times, lets decide() choose which to advance, and writes those. */
  async update<T>(
    keys: readonly string[],
    decide: (tats: ReadonlyMap<string, number>) => { result: T; write: ReadonlyMap<string, number> },
  ): Promise<T> {
    const current = new Map<string, number>();
    for (const key of keys) {
      const tat = this.tat.get(key);
      if (tat !== undefined) current.set(key, tat);
    }
    const { result, write } = decide(current);
    for (const [key, tat] of write) this.tat.set(key, tat);
    if (this.tat.size > 100_000) this.forget();
    return result;
  }

  /** Drops keys whose budget is full again (their schedule is in the past), so memory tracks active callers only. */
  private forget(): void {
    const now = this.clock.now();
    for (const [key, tat] of this.tat) if (tat <= now) this.tat.delete(key);
  }
}

/**
 * The generic cell rate algorithm over one minute: each key has a theoretical arrival time that every admitted
 * request pushes forward by 60 s / limit. Bursts up to the limit pass; after that, requests are spaced evenly, so no
 * window boundary ever lets twice the limit through (a fixed window would).
 */
function probe(
  limit: number,
  storedTat: number | undefined,
  now: number,
): { admitAt: number; nextTat: number; remaining: number } {
  const interval = WINDOW_MS / limit;
  const nextTat = nextArrival(storedTat, now, interval);
  const admitAt = nextTat - WINDOW_MS;
  return { admitAt, nextTat, remaining: Math.max(0, Math.floor((now + WINDOW_MS - nextTat) / interval)) };
}

/**
 * Per caller and per organization: in this process, or across replicas when the cells are in the shared store. A
 * request must fit both; only an admitted request spends budget, so a caller that is refused does not use up its
 * organization's.
 */
export class RateLimiter {
  private readonly cells: RateCells;
  /**
   * Failed authentications per address stay in each process: checking a shared cell would cost every request a
   * round trip, and N replicas allowing N budgets of guesses still makes guessing a 40-character token hopeless.
   */
  private readonly local: MemoryRateCells;

  constructor(
    readonly settings: RateLimitSettings,
    private readonly clock: Clock,
    cells?: RateCells,
  ) {
    this.local = new MemoryRateCells(clock);
    this.cells = cells ?? this.local;
  }

  private get failedAuthLimit(): number {
    return this.settings.failedAuthPerAddress ?? 20;
  }

  /**
   * Seconds a client address must wait before it may try to authenticate again: 0 while it has failed fewer
   * times than its budget (guessing tokens costs time, whatever the tokens are).
   */
  async authenticationWait(address: string): Promise<number> {
    if (this.failedAuthLimit <= 0) return 0;
    const key = `auth:${address}`;
    const now = this.clock.now();
    return this.local.update([key], (tats) => {
      const p = probe(this.failedAuthLimit, tats.get(key), now);
      return { result: p.admitAt > now ? Math.ceil((p.admitAt - now) / 1000) : 0, write: new Map() };
    });
  }

  /**
   * Counts a failed authentication against its client address; true when this one spent the address's budget (the
   * start of a burst the audit log records: later attempts are refused before they are counted).
   */
  async authenticationFailed(address: string): Promise<boolean> {
    if (this.failedAuthLimit <= 0) return false;
    const key = `auth:${address}`;
    const now = this.clock.now();
    return this.local.update([key], (tats) => {
      const nextTat = probe(this.failedAuthLimit, tats.get(key), now).nextTat;
      return {
        result: probe(this.failedAuthLimit, nextTat, now).admitAt > now,
        write: new Map([[key, nextTat]]),
      };
    });
  }

  /**
   * Whether the burst just started is one the audit log records: at most FAILED_BURSTS_AUDITED a minute in this
   * process, however many addresses start one (each may every minute, and an attacker's addresses are many).
   */
  async failedBurstAudited(): Promise<boolean> {
    const cell = { key: 'audit:failed_bursts', intervalMs: WINDOW_MS / FAILED_BURSTS_AUDITED };
    return (await this.local.admit([cell], this.clock.now())).admitted;
  }

  async admit(caller: string, organization: string | undefined): Promise<Admission> {
    const { perCaller, perOrganization } = this.settings;
    const callerKey = perCaller > 0 ? `caller:${caller}` : undefined;
    const orgKey = perOrganization > 0 && organization !== undefined ? `org:${organization}` : undefined;
    const cells: RateCell[] = [
      ...(callerKey ? [{ key: callerKey, intervalMs: WINDOW_MS / perCaller }] : []),
      ...(orgKey ? [{ key: orgKey, intervalMs: WINDOW_MS / perOrganization }] : []),
    ];
    const now = this.clock.now();
    const { admitted: allowed, before } =
      cells.length > 0 ? await this.cells.admit(cells, now) : { admitted: true, before: new Map<string, number>() };
    const c = callerKey ? probe(perCaller, before.get(callerKey), now) : undefined;
    const o = orgKey ? probe(perOrganization, before.get(orgKey), now) : undefined;
    const admitAt = Math.max(c?.admitAt ?? now, o?.admitAt ?? now);
    return {
      allowed,
      // Never 0 when refused: the cells decided, and a refusal always has a later moment to try again.
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((admitAt - now) / 1000)),
      // A refused request spends nothing: each budget reports what it really has left (only the one that refused is 0).
      caller: {
        limit: perCaller,
        remaining: c ? (allowed ? c.remaining : c.admitAt > now ? 0 : c.remaining + 1) : -1,
      },
      organization: {
        limit: perOrganization,
        remaining: o ? (allowed ? o.remaining : o.admitAt > now ? 0 : o.remaining + 1) : -1,
      },
    };
  }
}
