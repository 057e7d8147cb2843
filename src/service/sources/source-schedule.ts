import type { Cron } from 'croner';
import { requireCommonJs } from '../../support/load-commonjs.js';
import { LakeServiceError } from '../core/errors.js';

/**
 * When a source syncs by itself: every fixed interval, or at the times a cron expression names in a time zone.
 * Stored as given (normalized), so the source shows what its owner wrote.
 */
export type SourceSchedule = { interval: string } | { cron: string; timeZone: string };

/** What a caller may send: an interval, or a cron expression with an optional time zone (UTC by default). */
export interface ScheduleInput {
  interval?: string | null;
  cron?: string | null;
  time_zone?: string | null;
}

/** The shortest interval: a sync every few seconds would only queue behind itself and load the source. */
const MIN_INTERVAL_SECONDS = 60;
/** The longest: a schedule rarer than a month is better written as a cron expression. */
const MAX_INTERVAL_SECONDS = 31 * 86_400;
const UNIT_SECONDS = { m: 60, h: 3600, d: 86_400 } as const;
const NICKNAMES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

const invalid = (param: string, message: string): LakeServiceError =>
  new LakeServiceError('invalid_source_parameters', message, { param: `schedule.${param}` });

/** An interval's length in seconds: `15m`, `1h`, `1h30m`, `2d` (units m, h, d, largest first). */
export function intervalSeconds(text: string): number | undefined {
  const match = /^(?:(\d{1,4})d)?(?:(\d{1,4})h)?(?:(\d{1,6})m)?$/.exec(text);
  if (!match || text === '') return undefined;
  const [, d, h, m] = match;
  return Number(d ?? 0) * UNIT_SECONDS.d + Number(h ?? 0) * UNIT_SECONDS.h + Number(m ?? 0) * UNIT_SECONDS.m;
}

/** croner, loaded the first time a cron schedule is read: most commands never need it. */
let cronClass: typeof Cron | undefined;
function cronOf(pattern: string, timeZone: string): Cron {
  cronClass ??= (requireCommonJs('croner') as { Cron: typeof Cron }).Cron;
  return new cronClass(pattern, { timezone: timeZone, paused: true });
}

/** Checks what a caller sent (400 invalid_source_parameters naming the field) and returns the schedule to keep. */
export function parseSchedule(input: ScheduleInput): SourceSchedule {
  const interval = input.interval ?? undefined;
  const cron = input.cron?.trim().replace(/\s+/g, ' ') || undefined;
  if ((interval === undefined) === (cron === undefined))
    throw invalid(
      interval === undefined ? 'interval' : 'cron',
      'A schedule is either {"interval": "15m"} or {"cron": "0 6 * * *", "time_zone": "Europe/Berlin"}: give one of interval and cron.',
    );
  if (interval !== undefined) {
    if (input.time_zone != null)
      throw invalid('time_zone', 'An interval runs from the last run, in no time zone; time_zone goes with cron.');
    const seconds = intervalSeconds(interval);
    if (seconds === undefined)
      throw invalid('interval', `'${interval.slice(0, 32)}' is not an interval: write it as 15m, 1h, 1h30m or 2d.`);
    if (seconds < MIN_INTERVAL_SECONDS || seconds > MAX_INTERVAL_SECONDS)
      throw invalid('interval', 'An interval is between 1m and 31d; for rarer runs, write a cron expression.');
    return { interval };
  }
  const pattern = cron as string;
  const timeZone = input.time_zone ?? 'UTC';
  if (!validTimeZone(timeZone))
    throw invalid('time_zone', `'${timeZone.slice(0, 64)}' is not an IANA time zone (such as UTC or Europe/Berlin).`);
  // Five fields (minute hour day month weekday) or a nickname: croner also takes a seconds field, which would let
  // a schedule fire every second.
  if (pattern.length > 200 || (!NICKNAMES.includes(pattern.toLowerCase()) && pattern.split(' ').length !== 5))
    throw invalid(
      'cron',
      'A cron expression has five fields (minute hour day-of-month month day-of-week), such as "0 6 * * 1-5", or is @hourly, @daily, @weekly, @monthly or @yearly.',
    );
  let next: Date | null;
  try {
    next = cronOf(pattern, timeZone).nextRun(new Date());
  } catch (error) {
    throw invalid('cron', `'${pattern.slice(0, 64)}' is not a cron expression lake can read: ${reasonOf(error)}.`);
  }
  if (next === null) throw invalid('cron', `'${pattern.slice(0, 64)}' never comes due (such as 31 February).`);
  return { cron: pattern, timeZone };
}

/** croner's reason without its prefix ("CronPattern: Invalid value for minute: 61"). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Cron\w*: /, '').slice(0, 200);
}

function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.length <= 64;
  } catch {
    return false;
  }
}

/**
 * The first time after `afterSeconds` (epoch seconds) at which the schedule comes due, null if never. An interval counts from
 * `fromSeconds` (the tick that just ran, or when the schedule was set) in whole steps, so a server that was down
 * for hours runs once when it is back, not once per tick it missed, and the times do not drift.
 */
export function nextRunAfter(
  schedule: SourceSchedule,
  afterSeconds: number,
  fromSeconds = afterSeconds,
): number | null {
  if ('interval' in schedule) {
    const step = intervalSeconds(schedule.interval) as number;
    const steps = Math.max(1, Math.floor((afterSeconds - fromSeconds) / step) + 1);
    return fromSeconds + steps * step;
  }
  const next = cronOf(schedule.cron, schedule.timeZone).nextRun(new Date(afterSeconds * 1000));
  // A schedule that comes due no more (checked when it was set) has no next run.
  return next === null ? null : Math.floor(next.getTime() / 1000);
}
