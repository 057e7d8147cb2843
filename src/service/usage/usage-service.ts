import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../core/clock.js';
import { LakeServiceError } from '../core/errors.js';
import type { Lake } from '../storage/lake.js';
import type { UsageStore } from './usage-store.js';

/** What lake meters, per organization and day (docs/api.md, "Usage"). */
export const METRICS = ['queries_run', 'result_bytes', 'rows_synced', 'rows_sent'] as const;
export type Metric = (typeof METRICS)[number];

/** Prices in USD. Summed metrics are priced per unit; storage per GB-month of current lake data. */
export interface PriceTable {
  queries_run: number;
  result_bytes_per_gb: number;
  rows_synced_per_million: number;
  rows_sent_per_million: number;
  storage_per_gb_month: number;
}

export const DEFAULT_PRICES: PriceTable = {
  queries_run: 0.0005,
  result_bytes_per_gb: 0.02,
  rows_synced_per_million: 0.25,
  rows_sent_per_million: 0.25,
  storage_per_gb_month: 0.023,
};

const GB = 1024 ** 3;

/** The price table: LAKE_PRICES_FILE, else prices.json in the home, else the defaults; keys not given keep theirs. */
export function loadPrices(homeRoot: string, pricesFile: string | undefined): PriceTable {
  const file = pricesFile ?? join(homeRoot, 'prices.json');
  if (!existsSync(file)) return DEFAULT_PRICES;
  const given = JSON.parse(readFileSync(file, 'utf8')) as Partial<PriceTable>;
  return { ...DEFAULT_PRICES, ...given };
}

function dayCost(quantities: Record<Metric, number>, prices: PriceTable): number {
  return (
    quantities.queries_run * prices.queries_run +
    (quantities.result_bytes / GB) * prices.result_bytes_per_gb +
    (quantities.rows_synced / 1e6) * prices.rows_synced_per_million +
    (quantities.rows_sent / 1e6) * prices.rows_sent_per_million
  );
}

const noQuantities = (): Record<Metric, number> =>
  Object.fromEntries(METRICS.map((m) => [m, 0])) as Record<Metric, number>;

const round = (usd: number): number => Math.round(usd * 1e6) / 1e6;

export interface UsageReport {
  month: string;
  days: ({ date: string; cost: number } & Record<Metric, number>)[];
  totals: Record<Metric, number>;
  /** Per query tag: the queries and result bytes of the month, and their cost. */
  byTag: { tag: string; queries_run: number; result_bytes: number; cost: number }[];
  storageBytes: number;
  prices: PriceTable;
  monthToDate: number;
  projected: number;
  daysElapsed: number;
  daysInMonth: number;
}

/** Meters work as it happens, and reports a month with its projected cost. */
export class UsageService {
  constructor(
    private readonly store: UsageStore,
    private readonly lake: Lake,
    private readonly clock: Clock,
    private readonly prices: () => PriceTable,
  ) {}

  /** Adds to a metric's day; with tags (a query's), to each tag's sum of it too. */
  async record(organizationId: string, metric: Metric, quantity: number, tags: readonly string[] = []): Promise<void> {
    await this.recordEach(organizationId, { [metric]: quantity }, tags);
  }

  /** Adds to several metrics' day at once (one statement, and one per tag). */
  async recordEach(
    organizationId: string,
    quantities: Partial<Record<Metric, number>>,
    tags: readonly string[] = [],
  ): Promise<void> {
    const counted = Object.entries(quantities).filter(([, quantity]) => quantity !== undefined && quantity > 0) as [
      Metric,
      number,
    ][];
    if (counted.length === 0) return;
    const day = new Date(this.clock.now()).toISOString().slice(0, 10);
    await this.store.add(organizationId, day, counted);
    for (const tag of tags) await this.store.add(organizationId, day, counted, tag);
  }

  /**
   * A month's days and totals. The projection for the current month is month-to-date × days in month ÷ days
   * elapsed (today counting as elapsed), plus current storage at its monthly price; past months are what they were.
   */
  async report(principal: Principal, month?: string): Promise<UsageReport> {
    const now = new Date(this.clock.now());
    const current = now.toISOString().slice(0, 7);
    const target = month ?? current;
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(target))
      throw new LakeServiceError('parameter_invalid', 'month must look like 2026-11.', { param: 'month' });
    const [year, mon] = target.split('-').map(Number) as [number, number];
    const daysInMonth = new Date(Date.UTC(year, mon, 0)).getUTCDate();
    const daysElapsed = target === current ? now.getUTCDate() : target < current ? daysInMonth : 0;
    const rows = await this.store.month(principal.organizationId, target);
    const prices = this.prices();
    const byDay = new Map<string, Record<Metric, number>>();
    for (const row of rows) {
      const quantities = byDay.get(row.day) ?? noQuantities();
      if ((METRICS as readonly string[]).includes(row.metric)) quantities[row.metric as Metric] += row.quantity;
      byDay.set(row.day, quantities);
    }
    const days = [...byDay].map(([date, q]) => ({ date, ...q, cost: round(dayCost(q, prices)) }));
    const tagged = new Map<string, Record<Metric, number>>();
    for (const row of await this.store.monthByTag(principal.organizationId, target)) {
      const quantities = tagged.get(row.tag) ?? noQuantities();
      if ((METRICS as readonly string[]).includes(row.metric)) quantities[row.metric as Metric] += Number(row.quantity);
      tagged.set(row.tag, quantities);
    }
    const byTag = [...tagged].map(([tag, q]) => ({
      tag,
      queries_run: q.queries_run,
      result_bytes: q.result_bytes,
      cost: round(dayCost(q, prices)),
    }));
    const totals = noQuantities();
    for (const d of days) for (const m of METRICS) totals[m] += d[m];
    // What the lake really holds: current snapshots and the older ones still kept for queries that may read them.
    const storageBytes = await this.lake.storedBytes(principal.organizationId);
    const storage = (storageBytes / GB) * prices.storage_per_gb_month;
    const metered = dayCost(totals, prices);
    const projectedMetered = daysElapsed > 0 && target === current ? (metered * daysInMonth) / daysElapsed : metered;
    return {
      month: target,
      days,
      totals,
      byTag,
      storageBytes,
      prices,
      monthToDate: round(metered + (target === current ? storage : 0)),
      projected: round(projectedMetered + (target === current ? storage : 0)),
      daysElapsed,
      daysInMonth,
    };
  }
}
