/** "00" to "99", by index: the two-digit fields of dates and times, written without a padStart per value. */
export const TWO_DIGITS: readonly string[] = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
