import { readFileSync } from 'node:fs';
import { paletteFor } from '../render/colors.js';
import { resolveOutputFormat, UnknownFormatError } from '../render/output-format.js';
import { createRowWriter, type Row } from '../render/rows.js';
import type { LakeClient } from '../service/client/lake-client.js';
import type { CommandContext } from './context.js';
import { CliError, EXIT, usageError } from './exit-codes.js';

/** Epoch seconds as a UTC timestamp for tables and fields. */
export const when = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** Rows of a listing in the chosen format: a table on a terminal, TSV in a pipe, or --output / LAKE_OUTPUT. */
export function printRows(ctx: CommandContext, output: string | undefined, columns: string[], rows: Row[]): void {
  let format;
  try {
    format = resolveOutputFormat(ctx.io, { flag: output, env: ctx.env.LAKE_OUTPUT });
  } catch (error) {
    if (error instanceof UnknownFormatError) throw usageError(error.message);
    throw error;
  }
  const writer = createRowWriter(format, ctx.io.stdout, paletteFor(ctx.io, 'stdout'));
  writer.begin(columns);
  writer.write(rows);
  writer.end();
}

/** A request body from `--from-file`: a JSON object, or a usage error that says what is wrong with the file. */
export function readBodyFile(file: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new CliError('file_unreadable', `Cannot read a JSON object from ${file}: ${error instanceof Error ? error.message : String(error)}.`, EXIT.usage);
  }
}

/** Every item of a paginated list, following next_cursor in pages of 100. */
export async function fetchAll<T>(client: LakeClient, path: string): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.get<{ data: T[]; has_more: boolean; next_cursor: string | null }>(path, { limit: 100, starting_after: cursor });
    all.push(...page.data);
    cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
  } while (cursor);
  return all;
}
