import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import type { DuckDBInstance } from '@duckdb/node-api';
import { loadDuckDB, OFFLINE_CONFIG, quoteLiteral } from '../engine/duckdb.js';
import { writeArrowStream } from './arrow-stream.js';
import { writeCompressedArrowStream } from './arrow-compressed.js';
import { LakeServiceError } from '../core/errors.js';

/** The forms a result downloads in: the Parquet the query wrote, or one made from it. */
export const RESULT_FILE_FORMATS = ['parquet', 'csv', 'arrow', 'arrow_zstd'] as const;
export type ResultFileFormat = (typeof RESULT_FILE_FORMATS)[number];

/**
 * The file extension and media type of each form, and what tells its file apart from another form's with the same
 * extension beside the same Parquet (a compressed Arrow stream is still an `.arrows` file to the client).
 */
export const FILE_FORMAT_TYPES: Record<ResultFileFormat, { extension: string; mediaType: string; marker?: string }> = {
  parquet: { extension: 'parquet', mediaType: 'application/vnd.apache.parquet' },
  csv: { extension: 'csv', mediaType: 'text/csv; charset=utf-8; header=present' },
  arrow: { extension: 'arrows', mediaType: 'application/vnd.apache.arrow.stream' },
  arrow_zstd: { extension: 'arrows', mediaType: 'application/vnd.apache.arrow.stream', marker: '.zstd' },
};

/**
 * A text column is dictionary-encoded in a compressed Arrow stream when its distinct values are at most this share
 * of the rows: then the dictionary and its indices are smaller than the strings, which Arrow cannot otherwise
 * compress well (each string's int32 offset defeats zstd).
 */
const DICTIONARY_DISTINCT_SHARE = 0.25;
/** …and at most this many: beyond, the dictionary would restart (TextDictionary's limit) and gain little. */
const DICTIONARY_MAX_DISTINCT = 1_000_000;

/** Conversions that run at once in a process; more wait for one of them to end. */
const MAX_CONVERSIONS = 2;

/**
 * A result in another form than its Parquet file: made once, beside it, by a private DuckDB instance that runs only
 * these fixed conversions of files lake wrote itself, streaming (a memory limit, no row held), in the result's row
 * order. Later downloads, and their Range requests, read the same bytes. Conversions of one file share one run.
 */
export class ResultFormats {
  private instance: Promise<DuckDBInstance> | undefined;
  private readonly running = new Map<string, Promise<string>>();
  /** Conversions under way, and those waiting for one to end: a few at a time, whoever asks for many. */
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  /**
   * The result file in `format`, made if it is not there yet; with its size. A form that cannot be made now (the
   * disk full, say) is a 503 to retry, never a 500: the result itself is intact, and nothing half-made is kept.
   */
  async file(
    parquet: string,
    format: ResultFileFormat,
    /** Told the size of a form when it is made (once, however many asked for it meanwhile). */
    onMade: (bytes: number) => Promise<void> = async () => undefined,
  ): Promise<{ file: string; size: number }> {
    const file =
      format === 'parquet'
        ? parquet
        : await this.converted(parquet, format, onMade).catch((error: unknown) => {
            const reason = (error as NodeJS.ErrnoException).code ?? 'the conversion failed';
            throw new LakeServiceError(
              'service_unavailable',
              `The result could not be made as ${format} just now (${reason}); try again, or download it as Parquet.`,
              { retryAfterSeconds: 10 },
            );
          });
    return { file, size: statSync(file).size };
  }

  /** Whether the form is already made (asking for it costs nothing more). */
  made(parquet: string, format: ResultFileFormat): boolean {
    return format === 'parquet' || existsSync(this.target(parquet, format));
  }

  /** Where the form of a result is kept: beside its Parquet file. */
  target(parquet: string, format: ResultFileFormat): string {
    const { extension, marker = '' } = FILE_FORMAT_TYPES[format];
    return `${parquet.replace(/\.parquet$/, '')}${marker}.${extension}`;
  }

  private converted(
    parquet: string,
    format: Exclude<ResultFileFormat, 'parquet'>,
    onMade: (bytes: number) => Promise<void>,
  ): Promise<string> {
    const target = this.target(parquet, format);
    if (existsSync(target)) return Promise.resolve(target);
    let run = this.running.get(target);
    if (!run) {
      const partial = `${target}.partial`;
      run = this.oneAtATime(async () => {
        try {
          await this.write(format, parquet, partial);
          // Counted before it is served: a kill -9 between the two leaves it counted and never served (freed with
          // its query), not served and never counted.
          await onMade(statSync(partial).size);
          // Whole or not at all: a download never sees a file still being written.
          renameSync(partial, target);
          return target;
        } catch (error) {
          rmSync(partial, { force: true });
          throw error;
        }
      }).finally(() => this.running.delete(target));
      this.running.set(target, run);
    }
    return run;
  }

  /** Runs a conversion when fewer than MAX_CONVERSIONS are under way; each takes cores the server answers with. */
  private async oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    // A slot is handed from the conversion that ends straight to the next waiting one.
    if (this.active >= MAX_CONVERSIONS) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  private async write(format: Exclude<ResultFileFormat, 'parquet'>, parquet: string, target: string): Promise<void> {
    if (format === 'csv') return this.writeCsv(parquet, target);
    if (format === 'arrow') return writeArrowStream(parquet, target);
    return writeCompressedArrowStream(parquet, target, await this.repetitiveTextColumns(parquet));
  }

  /**
   * The positions of the text columns whose values repeat enough to be worth a dictionary, from one streaming pass
   * of DuckDB's approximate distinct count (HyperLogLog: a few kilobytes a column, whatever the rows).
   */
  private async repetitiveTextColumns(parquet: string): Promise<Set<number>> {
    const connection = await (await this.open()).connect();
    try {
      const source = `read_parquet(${quoteLiteral(parquet)})`;
      const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
      const text = described
        .getRowObjects()
        .map((column, position) => ({ position, type: String(column.column_type) }))
        .filter((column) => column.type === 'VARCHAR');
      if (text.length === 0) return new Set();
      // Positional references: a result's column names may repeat.
      const counts = text.map((column) => `approx_count_distinct(#${column.position + 1})`).join(', ');
      const row = (await connection.runAndReadAll(`SELECT count(*), ${counts} FROM ${source}`)).getRows()[0] ?? [];
      const rows = Number(row[0] ?? 0);
      return new Set(
        text
          .filter((_, i) => {
            const distinct = Number(row[i + 1] ?? rows);
            return distinct <= rows * DICTIONARY_DISTINCT_SHARE && distinct <= DICTIONARY_MAX_DISTINCT;
          })
          .map((column) => column.position),
      );
    } finally {
      connection.closeSync();
    }
  }

  /** CSV as RFC 4180 has it: a header, CRLF line ends, fields quoted only when they must be, NULL empty. */
  private async writeCsv(parquet: string, target: string): Promise<void> {
    const connection = await (await this.open()).connect();
    try {
      // Timestamps with a time zone are written in UTC, as every other form of a result shows them.
      await connection.run("SET TimeZone = 'UTC'");
      await connection.run(
        `COPY (SELECT * FROM read_parquet(${quoteLiteral(parquet)})) TO ${quoteLiteral(target)} (FORMAT csv, HEADER, DELIMITER ',', QUOTE '"', ESCAPE '"', NEW_LINE '\\r\\n')`,
      );
    } finally {
      connection.closeSync();
    }
  }

  private open(): Promise<DuckDBInstance> {
    this.instance ??= (async () => {
      const duckdb = await loadDuckDB();
      const instance = await duckdb.DuckDBInstance.create(':memory:', {
        ...OFFLINE_CONFIG,
        threads: '2',
        // Streams through; a large result never sits in this process. Rows keep the result's order.
        memory_limit: '256MB',
        preserve_insertion_order: 'true',
      });
      return instance;
    })();
    this.instance.catch(() => (this.instance = undefined));
    return this.instance;
  }
}
