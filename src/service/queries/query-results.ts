import { existsSync, rmSync, statSync } from 'node:fs';
import { ResultFormats, type ResultFileFormat } from './result-formats.js';
import type { JsonRow } from '../engine/result-rows.js';
import { LakeServiceError } from '../core/errors.js';
import { checkResultSignature, signedResultPath, type Signer, type SignedPath } from '../files/url-signer.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { LakeLayout } from '../storage/layout.js';
import { FirstPages } from './first-pages.js';
import type { ResultReader } from './result-reader.js';
import type { QueryRecord, QueryStore } from './store.js';

/** A result file on local disk, kept there (not evicted from the cache) until released. */
export interface HeldFile {
  file: string;
  size: number;
  release: () => void;
}

export interface ResultPage {
  rows: JsonRow[];
  /** The offset after the last row of the page. */
  end: number;
  hasMore: boolean;
}

/**
 * The one owner of query results: where a result's file is, its pages as JSON (page one from what the engine read
 * back, others from the file), page cursors, and signed download links. Routes, sends and canvases all read results
 * through it.
 */
export class QueryResults {
  /** First pages of results that just succeeded, read back by the engine that wrote them. */
  readonly firstPages = new FirstPages();

  constructor(
    private readonly store: QueryStore,
    private readonly layout: LakeLayout,
    private readonly reader: ResultReader,
    private readonly signer: Signer,
    /** The bytes of results (and forms made from them) an organization may keep: QuerySettings.orgResultStorageBytes. */
    private readonly storageLimit: number = Number.POSITIVE_INFINITY,
    private readonly formats: ResultFormats = new ResultFormats(),
  ) {}

  /**
   * A result in `format`: a form not made yet is made only while the organization has result storage left, and
   * counts against it once made (a CSV is often ten times the Parquet).
   */
  private async form(
    query: { id: string; organizationId: string },
    parquet: string,
    format: ResultFileFormat,
  ): Promise<{ file: string; size: number }> {
    if (
      !this.formats.made(parquet, format) &&
      (await this.store.resultBytesKept(query.organizationId)) >= this.storageLimit
    )
      throw new LakeServiceError(
        'result_storage_full',
        `Your organization keeps its limit of query results; the result can be made as ${format} when older results have gone, or downloaded as Parquet now.`,
      );
    return this.formats.file(parquet, format, (bytes) => this.store.addDerivedBytes(query.id, bytes));
  }

  /** The result file of a succeeded query, while it is kept. */
  file(query: QueryRecord): string | undefined {
    return query.resultFile ? this.layout.toAbsolute(query.resultFile) : undefined;
  }

  /** How a result file is recorded: relative to the home, so the home can move. */
  relativePath(file: string): string {
    return this.layout.toRelative(file);
  }

  /** Keeps a result file where lake keeps files (uploads it, with an object store). */
  publish(file: string): Promise<void> {
    return this.layout.files.publish([file]);
  }

  /** Keeps the first rows the engine read back from a result it just wrote, for the first page. */
  keepFirstPage(queryId: string, rows: JsonRow[]): void {
    this.firstPages.keep(queryId, rows);
  }

  /** Removes the results (files and first pages) of queries past retention, wherever they are kept. */
  async forget(queries: readonly { id: string; organizationId: string }[]): Promise<void> {
    for (const { id, organizationId } of queries) {
      this.firstPages.drop(id);
      const dir = this.layout.resultDir(organizationId, id);
      try {
        const kept = await this.layout.files.list(dir);
        await this.layout.files.remove(kept.map((file) => this.layout.toAbsolute(file.path)));
      } catch {
        // The object store unreachable: the record goes, and its objects with the collector's sweep of results.
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Rows [offset, offset + limit) of a succeeded query's result (a page may stop short at its byte budget). */
  async page(query: QueryRecord, offset: number, limit: number): Promise<ResultPage> {
    const total = query.rowCount ?? 0;
    const file = this.file(query);
    if (!file || offset >= total) return { rows: [], end: offset, hasMore: false };
    const first = offset === 0 ? this.firstPages.rows(query.id, limit, total) : undefined;
    const rows = first ?? (await this.readHeld(file, () => this.reader.page(file, offset, limit))).rows;
    const end = offset + rows.length;
    return { rows, end, hasMore: end < total };
  }

  /** The opaque cursor of the page that starts at `offset`. */
  cursorAt(queryId: string, offset: number): string {
    return encodeCursor(this.signer, queryId, offset);
  }

  /** The offset a cursor stands for; a cursor of another query, an edited one or one past the end is refused. */
  offsetOf(query: QueryRecord, cursor: string | undefined): number {
    if (cursor === undefined) return 0;
    const offset = decodeCursor(this.signer, query.id, cursor);
    if (offset === undefined || (query.rowCount !== null && offset > query.rowCount)) {
      throw new LakeServiceError(
        'invalid_cursor',
        'starting_after is not a next_cursor from a previous page of this query.',
        { param: 'starting_after' },
      );
    }
    return offset;
  }

  /** A succeeded query's result file in `format` (made from its Parquet the first time), with its size. */
  async fileIn(query: QueryRecord, format: ResultFileFormat): Promise<{ file: string; size: number }> {
    const file = this.file(query);
    if (!file)
      throw new LakeServiceError('query_not_found', `The result of ${query.id} no longer exists; run it again.`);
    const { release, ...made } = await this.held(query, file, format);
    release();
    return made;
  }

  /**
   * The result on local disk (fetched into the cache, with an object store) in `format`, kept there until the
   * caller releases it (a download's stream has ended).
   */
  private async held(query: QueryRecord, file: string, format: ResultFileFormat): Promise<HeldFile> {
    const { files } = this.layout;
    // A form another replica made is kept beside the result in the object store: fetched, not made again.
    const target = this.formats.target(file, format);
    const kept = format === 'parquet' ? undefined : await files.holdIfKept(target);
    if (kept) return { file: target, size: statSync(target).size, release: kept };
    const release = await files.hold([file]);
    try {
      if (!existsSync(file))
        throw new LakeServiceError('query_not_found', `The result of ${query.id} no longer exists; run it again.`);
      const made = await this.form(query, file, format);
      if (format !== 'parquet') await files.publish([made.file]);
      return { ...made, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  private async readHeld<T>(file: string, read: () => Promise<T>): Promise<T> {
    const release = await this.layout.files.hold([file]);
    try {
      return await read();
    } finally {
      release();
    }
  }

  /** A download link for the result, valid for an hour, relative to the service's address. */
  downloadLink(queryId: string): SignedPath {
    return signedResultPath(this.signer, queryId);
  }

  /** The file a signed download link names, with its size; the link's own problems are said precisely. */
  async download(
    queryId: string,
    expires: string | undefined,
    signature: string | undefined,
    format: ResultFileFormat = 'parquet',
  ): Promise<HeldFile> {
    const check = checkResultSignature(this.signer, `/files/results/${queryId}`, expires, signature);
    if (check === 'invalid')
      throw new LakeServiceError(
        'signed_url_invalid',
        'This download URL is not valid. Poll the query for a freshly signed one.',
      );
    if (check === 'expired')
      throw new LakeServiceError(
        'signed_url_expired',
        'This download URL has expired (they last one hour). Poll the query for a fresh one.',
      );
    const found = await this.store.forDownload(queryId);
    const file = found && this.file(found.query);
    if (!found || !file)
      throw new LakeServiceError(
        'query_not_found',
        'This result no longer exists; results are kept for a limited time.',
      );
    // A link signed before the operator deactivated the organization stops with its credentials.
    if (found.organizationDeactivated)
      throw new LakeServiceError(
        'organization_deactivated',
        'This organization was deactivated by the service operator; its result links no longer work (its data is kept). Ask the operator.',
      );
    return this.held(found.query, file, format);
  }
}
