import { isOutputFormat, OUTPUT_FORMATS, type OutputFormat } from './rows.js';
import type { IOStreams } from './iostreams.js';

export class UnknownFormatError extends Error {}

/**
 * The row format: --json, else --output, else LAKE_OUTPUT, else the profile's `output`, else a table on a
 * terminal and CSV in a pipe.
 */
export function resolveOutputFormat(
  io: IOStreams,
  choices: { json?: boolean; flag?: string; env?: string; profile?: string },
): OutputFormat {
  if (choices.json) return 'json';
  for (const value of [choices.flag, choices.env, choices.profile]) {
    if (value === undefined || value === '') continue;
    if (!isOutputFormat(value)) throw new UnknownFormatError(`Unknown output format '${value}'. Formats: ${OUTPUT_FORMATS.join(', ')}.`);
    return value;
  }
  return io.isStdoutTTY ? 'table' : 'csv';
}
