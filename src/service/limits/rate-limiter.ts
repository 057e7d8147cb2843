import type { Clock } from '../clock.js';

export interface RateLimitSettings {
  perCaller: number;
  perOrganization: number;
  /** Failed authentications a client address may make a minute before it must wait (0: no limit). */
  failedAuthPerAddress?: number;
}

/** 120 per caller and 600 per organization a minute (the spec), or LAKE_RATE_LIMIT_PER_CALLER / _PER_ORG; 0 turns a limit off. */
export function rateLimitsFromEnv(env: Record<string, string | undefined> = process.env): RateLimitSettings {
  const read = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number (0 turns the limit off), not '${raw}'.`);
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

const WINDOW_MS = 60_000;

/**
 * The generic cell rate algorithm over one minute: each key has a theoretical arrival time that every admitted
 * request pushes forward by 60 s / limit. Bursts up to the limit pass; after that, requests are spaced evenly, so no
 * window boundary ever lets twice the limit through (a fixed window would).
 */
class Gcra {
  private readonly tat = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** When (ms) a request arriving now would be admitted, and what admitting it would leave. */
  probe(key: string, now: number): { admitAt: number; nextTat: number; remaining: number } {
    const interval = WINDOW_MS / this.limit;
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const nextTat = tat + interval;
    const admitAt = nextTat - WINDOW_MS;
    return { admitAt, nextTat, remaining: Math.max(0, Math.floor((now + WINDOW_MS - nextTat) / interval)) };
  }

  commit(key: string, nextTat: number, now: number): void {
    this.tat.set(key, nextTat);
    if (this.tat.size > 100_000) this.forget(now);
  }

  /** Drops keys whose budget is full again (their schedule is in the past), so memory tracks active callers only. */
  private forget(now: number): void {
    for (const [key, tat] of this.tat) if (tat <= now) this.tat.delete(key);
  }
}

/**
 * Per caller and per organization, in this process. A request must fit both; only an admitted request spends
 * budget, so a caller that is refused does not use up its organization's.
 */
export class RateLimiter {
  private readonly callers: Gcra | undefined;
  private readonly organizations: Gcra | undefined;
  private readonly failedAuth: Gcra | undefined;

  constructor(
    readonly settings: RateLimitSettings,
    private readonly clock: Clock,
  ) {
    this.callers = settings.perCaller > 0 ? new Gcra(settings.perCaller) : undefined;
    this.organizations = settings.perOrganization > 0 ? new Gcra(settings.perOrganization) : undefined;
    const failures = settings.failedAuthPerAddress ?? 20;
    this.failedAuth = failures > 0 ? new Gcra(failures) : undefined;
  }

  /**
   * Seconds a client address must wait before it may try to authenticate again: 0 while it has failed fewer
   * times than its budget (guessing tokens costs time, whatever the tokens are).
   */
  authenticationWait(address: string): number {
    const now = this.clock.now();
    const probe = this.failedAuth?.probe(address, now);
    return probe && probe.admitAt > now ? Math.ceil((probe.admitAt - now) / 1000) : 0;
  }

  /** Counts a failed authentication against its client address. */
  authenticationFailed(address: string): void {
    const now = this.clock.now();
    const probe = this.failedAuth?.probe(address, now);
    if (probe) this.failedAuth?.commit(address, probe.nextTat, now);
  }

  admit(caller: string, organization: string | undefined): Admission {
    const now = this.clock.now();
    const c = this.callers?.probe(caller, now);
    const o = organization === undefined ? undefined : this.organizations?.probe(organization, now);
    const admitAt = Math.max(c?.admitAt ?? now, o?.admitAt ?? now);
    const allowed = admitAt <= now;
    if (allowed) {
      if (c) this.callers?.commit(caller, c.nextTat, now);
      if (o && organization !== undefined) this.organizations?.commit(organization, o.nextTat, now);
    }
    return {
      allowed,
      retryAfterSeconds: allowed ? 0 : Math.ceil((admitAt - now) / 1000),
      // A refused request spends nothing: each budget reports what it really has left (only the one that refused is 0).
      caller: { limit: this.settings.perCaller, remaining: c ? (allowed ? c.remaining : c.admitAt > now ? 0 : c.remaining + 1) : -1 },
      organization: { limit: this.settings.perOrganization, remaining: o ? (allowed ? o.remaining : o.admitAt > now ? 0 : o.remaining + 1) : -1 },
    };
  }
}
