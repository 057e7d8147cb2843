import type { Clock } from '../clock.js';

export interface RateLimitSettings {
  perCaller: number;
  perOrganization: number;
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
  return { perCaller: read('LAKE_RATE_LIMIT_PER_CALLER', 120), perOrganization: read('LAKE_RATE_LIMIT_PER_ORG', 600) };
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

  constructor(
    readonly settings: RateLimitSettings,
    private readonly clock: Clock,
  ) {
    this.callers = settings.perCaller > 0 ? new Gcra(settings.perCaller) : undefined;
    this.organizations = settings.perOrganization > 0 ? new Gcra(settings.perOrganization) : undefined;
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
      caller: { limit: this.settings.perCaller, remaining: c ? (allowed ? c.remaining : 0) : -1 },
      organization: { limit: this.settings.perOrganization, remaining: o ? (allowed ? o.remaining : 0) : -1 },
    };
  }
}
