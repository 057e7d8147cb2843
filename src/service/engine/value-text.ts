/**
 * The exact text of dates, timestamps and decimals as DuckDB writes them, worked out with a double's exact integer
 * arithmetic where the value allows it: @duckdb/node-api's own text goes through BigInt division and a `Date` per
 * value, which made these the slowest columns of a page of JSON rows (docs/performance.md, "Paging").
 */
import { TWO_DIGITS } from '../../support/two-digits.js';

const MICROS_PER_DAY = 86_400_000_000;
/** Powers of ten a double holds exactly. */
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** A day's year, month and day of month, counted from 1970-01-01 in the proleptic Gregorian calendar, as DuckDB counts. */
function civilDate(days: number): { year: number; month: number; day: number } {
  // H. Hinnant's civil_from_days: whole-number arithmetic over 400-year eras, valid for every day DuckDB holds.
  const shifted = days + 719_468; // days since 0000-03-01, so that a year ends with its leap day
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  return {
    year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0),
    month,
    day: dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1,
  };
}

/** A day's date as DuckDB writes it, without the era mark: "2024-01-02", "10000-01-01", "0044-03-15" for 44 BC. */
function dayText(days: number): { ymd: string; bc: boolean } {
  const { year, month, day } = civilDate(days);
  const bc = year <= 0;
  return { ymd: `${String(bc ? 1 - year : year).padStart(4, '0')}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}`, bc };
}

/**
 * A DATE's text as DuckDB writes it: "2024-01-02"; a year past 9999 in full ("10000-01-01"); a year before 1 as
 * its number counted back from 1 BC, marked: "0044-03-15 (BC)" (@duckdb/node-api writes 1 BC as year "0000").
 */
export function dateText(days: number): string {
  const { ymd, bc } = dayText(days);
  return bc ? `${ymd} (BC)` : ymd;
}

/**
 * A writer of one column's dates: the text of the last day it wrote is kept, since a column of dates often holds one
 * day many times over, in order. One per column, so that two columns of other days do not undo each other's.
 */
export function dateWriter(): (days: number) => string {
  let lastDay = NaN;
  let lastText = '';
  return (days) => {
    if (days !== lastDay) {
      lastText = dateText(days);
      lastDay = days;
    }
    return lastText;
  };
}

/**
 * A writer of one column's timestamps, from microseconds since the epoch: "2024-01-02T03:04:05.123456", the fraction
 * with its trailing zeros removed, none for whole seconds, as DuckDB writes it; a year before 1 as DuckDB's text with
 * its first space a T, as lake has always written it ("0044-03-15T(BC) 10:11:12.5"). The text of the last day it
 * wrote is kept: rows of a result mostly share their day with the row before.
 */
export function timestampWriter(): (micros: bigint) => string {
  let lastDay = NaN;
  let lastPrefix = '';
  const prefixOf = (day: number): string => {
    if (day !== lastDay) {
      const { ymd, bc } = dayText(day);
      lastPrefix = bc ? `${ymd}T(BC) ` : `${ymd}T`;
      lastDay = day;
    }
    return lastPrefix;
  };
  return (micros) => {
    // Within ±2^53 µs of the epoch (years 1685 to 2255) a double holds the count exactly; beyond, BigInt arithmetic.
    const exact = Number(micros);
    if (Number.isSafeInteger(exact)) {
      const day = Math.floor(exact / MICROS_PER_DAY);
      const ofDay = exact - day * MICROS_PER_DAY;
      // The division rounds; were the day ever one off, the time of day would fall outside it: BigInt then.
      if (ofDay >= 0 && ofDay < MICROS_PER_DAY) return timeOfDay(prefixOf(day), ofDay);
    }
    const days = micros / 86_400_000_000n - (micros % 86_400_000_000n < 0n ? 1n : 0n);
    return timeOfDay(prefixOf(Number(days)), Number(micros - days * 86_400_000_000n));
  };
}

/** A TIME's text as DuckDB writes it ("03:04:05.5", "24:00:00"), from microseconds into a day (0 to 24 hours). */
export function timeText(micros: bigint): string | undefined {
  const ofDay = Number(micros);
  return ofDay >= 0 && ofDay <= MICROS_PER_DAY ? timeOfDay('', ofDay) : undefined;
}

/** `prefix` and "03:04:05.123456" for microseconds into a day. */
function timeOfDay(prefix: string, ofDay: number): string {
  const seconds = Math.floor(ofDay / 1_000_000);
  const base = `${prefix}${TWO_DIGITS[Math.floor(seconds / 3600)]}:${TWO_DIGITS[Math.floor(seconds / 60) % 60]}:${TWO_DIGITS[seconds % 60]}`;
  return withFraction(base, ofDay - seconds * 1_000_000);
}

/** `base` and ".123456" for a fraction of 0 to 999,999 µs, its trailing zeros removed; nothing for none. */
function withFraction(base: string, fraction: number): string {
  if (fraction === 0) return base;
  let digits = 6;
  while (fraction % 10 === 0) {
    fraction /= 10;
    digits--;
  }
  return `${base}.${String(fraction).padStart(digits, '0')}`;
}

/**
 * A DECIMAL's digits ("-12.50": every digit of its scale, as DuckDB writes them) from its scaled integer, when that
 * integer is one a double holds exactly (any DECIMAL(15, s), most DECIMAL(18, s) values).
 */
export function decimalText(scaled: bigint, scale: number): string | undefined {
  const exact = Number(scaled);
  if (!Number.isSafeInteger(exact) || scale >= POWERS_OF_TEN.length) return undefined;
  if (scale === 0) return String(exact);
  const magnitude = Math.abs(exact);
  const power = POWERS_OF_TEN[scale] as number;
  const whole = Math.floor(magnitude / power);
  const fraction = magnitude - whole * power;
  if (fraction < 0 || fraction >= power) return undefined;
  return `${exact < 0 ? '-' : ''}${whole}.${String(fraction).padStart(scale, '0')}`;
}
