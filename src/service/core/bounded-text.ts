/**
 * The longest reason kept from text another server wrote (a source's or a destination's error message, a table's
 * failure): it travels in API objects, every list of jobs, event streams and the logs.
 */
export const MAX_REASON_CHARS = 1000;

/**
 * The longest error message a job keeps, whatever made it: a sync's names ten tables with their reasons, and no
 * message an API object carries needs more.
 */
export const MAX_JOB_MESSAGE_CHARS = 16_000;

/** `text` cut to `max` characters, marked as cut; a lone surrogate left by the cut is dropped with it. */
export function boundedReason(text: string, max = MAX_REASON_CHARS): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}
