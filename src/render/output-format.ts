import { isOutputFormat, OUTPUT_FORMATS, type OutputFormat } from './rows.js';
import type { IOStreams } from './iostreams.js';

/** An --output value that is no format, or one that contradicts --json. */
export class UnknownFormatError extends Error {}

/**
 * `--json` with another `--output` contradicts itself: refused rather than silently printing one of them.
 * `ndjson` is what --json means on a stream, so a stream may allow it.
 */
export function assertFormatsAgree(
  json: boolean | undefined,
  output: string | undefined,
  allowed: readonly string[] = ['json'],
): void {
  if (json && output !== undefined && output !== '' && !allowed.includes(output)) {
    throw new UnknownFormatError(`--json and --output ${output} contradict each other; give one.`);
  }
}

/**
 * The row format: --json, else --output, else LAKE_OUTPUT, else the profile's `output`, else a table on a
 * terminal and CSV in a pipe.
 */
export function resolveOutputFormat(
  io: IOStreams,
  choices: { json?: boolean; flag?: string; env?: string; profile?: string },
): OutputFormat {
  assertFormatsAgree(choices.json, choices.flag);
  if (choices.json) return 'json';
  for (const value of [choices.flag, choices.env, choices.profile]) {
    if (value === undefined || value === '') continue;
    if (!isOutputFormat(value))
      throw new UnknownFormatError(`Unknown output format '${value}'. Formats: ${OUTPUT_FORMATS.join(', ')}.`);
    return value;
  }
  return io.isStdoutTTY ? 'table' : 'csv';
}
