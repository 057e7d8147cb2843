import type { Hono } from 'hono';
import type { UsageObject } from '../../../contract/types.js';
import type { ApiEnv } from '../env.js';
import { SERVICE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';

export function usageRoutes(app: Hono<ApiEnv>): void {
  mount(app, SERVICE_ROUTES.getUsage, async (c, { query }) => {
    const report = await c.get('services').usage.report(c.get('principal'), query.month);
    return c.json({
      object: 'usage',
      month: report.month,
      currency: 'USD',
      days: report.days,
      totals: report.totals,
      by_tag: report.byTag,
      storage_bytes: report.storageBytes,
      prices: report.prices,
      cost: {
        month_to_date: report.monthToDate,
        projected: report.projected,
        days_elapsed: report.daysElapsed,
        days_in_month: report.daysInMonth,
      },
    } satisfies UsageObject);
  });
}
