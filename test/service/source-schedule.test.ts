import { describe, expect, it } from 'vitest';
import { intervalSeconds, nextRunAfter, parseSchedule } from '../../src/service/sources/source-schedule.js';

const at = (iso: string): number => Date.parse(iso) / 1000;

describe('source schedules', () => {
  it('reads intervals in minutes, hours and days, largest unit first', () => {
    expect(intervalSeconds('15m')).toBe(900);
    expect(intervalSeconds('1h30m')).toBe(5400);
    expect(intervalSeconds('2d')).toBe(172_800);
    for (const text of ['', '15', 'm', '15s', '30m1h', '1.5h', ' 15m', '-5m'])
      expect(intervalSeconds(text)).toBeUndefined();
  });

  it('an interval comes due in whole steps from its last tick: once after a long gap, never drifting', () => {
    const schedule = parseSchedule({ interval: '15m' });
    const from = at('2026-11-10T12:00:00Z');
    expect(nextRunAfter(schedule, from)).toBe(from + 900);
    // The tick at 12:15 ran a little late (12:15:07): the next is 12:30, not 12:30:07.
    expect(nextRunAfter(schedule, from + 907, from + 900)).toBe(from + 1800);
    // Five hours down: one run now, and the next on the grid after it.
    expect(nextRunAfter(schedule, from + 5 * 3600 + 20, from + 900)).toBe(from + 5 * 3600 + 900);
  });

  it('a cron expression follows its time zone through summer time', () => {
    const berlin = parseSchedule({ cron: '0 6 * * *', time_zone: 'Europe/Berlin' });
    expect(berlin).toEqual({ cron: '0 6 * * *', timeZone: 'Europe/Berlin' });
    // 06:00 in Berlin is 04:00 UTC in summer and 05:00 UTC in winter; the clocks went back on 25 October 2026.
    expect(nextRunAfter(berlin, at('2026-10-24T12:00:00Z'))).toBe(at('2026-10-25T05:00:00Z'));
    expect(nextRunAfter(berlin, at('2026-10-23T12:00:00Z'))).toBe(at('2026-10-24T04:00:00Z'));
    expect(parseSchedule({ cron: '  @daily ' })).toEqual({ cron: '@daily', timeZone: 'UTC' });
    expect(nextRunAfter(parseSchedule({ cron: '*/20 9-17 * * 1-5' }), at('2026-11-13T17:45:00Z'))).toBe(
      at('2026-11-16T09:00:00Z'),
    );
  });
});
