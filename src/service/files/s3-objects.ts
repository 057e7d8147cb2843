import { createReadStream, readFileSync, statSync } from 'node:fs';
import { LakeServiceError } from '../core/errors.js';
import { requireCommonJs } from '../../support/load-commonjs.js';
import type { ObjectStoreSettings } from './object-store-settings.js';
import { SignedRequests } from './signed-requests.js';

type S3Sdk = typeof import('@aws-sdk/client-s3');
type StorageSdk = typeof import('@aws-sdk/lib-storage');

export interface ObjectInfo {
  key: string;
  size: number;
  modifiedMs: number;
}

/** Seconds a client is told to wait before trying again when the object store does not answer. */
const RETRY_AFTER_SECONDS = 5;

/**
 * An S3-compatible bucket under a prefix, through the AWS SDK (loaded only when LAKE_DATA_URL names one, so a local
 * lake never pays its start-up). Every failure becomes a LakeServiceError that names neither host, bucket nor key:
 * unreachable or erring stores are 503 service_unavailable with Retry-After.
 */
export class S3Objects {
  private client: import('@aws-sdk/client-s3').S3Client | undefined;
  private readonly requests: SignedRequests;

  constructor(private readonly settings: ObjectStoreSettings) {
    // Keys given are used as they are; any other credentials come from the SDK's chain (profiles, SSO, roles).
    const { credentials } = settings;
    this.requests = new SignedRequests(settings, async () =>
      credentials !== undefined ? credentials : await this.sdk().client.config.credentials(),
    );
  }

  /** The URL another engine reads a key at (the DuckLake data path is this for the tables' folder). */
  url(key: string): string {
    return `s3://${this.settings.bucket}/${this.settings.prefix}${key}`;
  }

  private sdk(): { s3: S3Sdk; client: import('@aws-sdk/client-s3').S3Client } {
    // The SDK warns on stderr, once per process, about Node versions it will stop supporting; a CLI's stderr is
    // its user's, and lake states what it supports itself.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const s3 = requireCommonJs('@aws-sdk/client-s3') as S3Sdk;
    this.client ??= new s3.S3Client({
      region: this.settings.region,
      forcePathStyle: this.settings.pathStyle,
      ...(this.settings.endpoint !== undefined ? { endpoint: this.settings.endpoint } : {}),
      ...(this.settings.credentials !== undefined ? { credentials: this.settings.credentials } : {}),
      maxAttempts: 3,
      // The SDK's own notes (a stream it cannot retry, say) would print on a CLI's stderr: lake says what failed.
      logger: QUIET,
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
      // Checksums the store may not know (emulators, older MinIO) only when the operation requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    return { s3, client: this.client };
  }

  private fullKey(key: string): string {
    return `${this.settings.prefix}${key}`;
  }

  /** Uploads a local file; in parts when larger than the multipart size. Nothing is visible until it completes. */
  async put(key: string, file: string): Promise<void> {
    const size = statSync(file).size;
    await this.call('upload a file', async () => {
      if (size <= this.settings.multipartBytes) {
        // Read whole (at most the multipart size): a body in memory can be sent again when a try fails.
        await this.requests.put(key, readFileSync(file));
        return;
      }
      const { client } = this.sdk();
      const { Upload } = requireCommonJs('@aws-sdk/lib-storage') as StorageSdk;
      // A failed part aborts the multipart upload: its parts never become an object.
      const upload = new Upload({
        client,
        params: { Bucket: this.settings.bucket, Key: this.fullKey(key), Body: createReadStream(file) },
        partSize: this.settings.multipartBytes,
        queueSize: 4,
        leavePartsOnError: false,
      });
      await upload.done();
    });
  }

  /**
   * Downloads an object to `file` (the caller renames it into place). Checked against the size expected and, where
   * the ETag is the object's MD5 (a single-part upload), its checksum: a short or changed download is refused.
   */
  async get(key: string, file: string, expectedSize?: number): Promise<number> {
    return this.call('read a file', async () => {
      const { bytes, etag, md5, length } = await this.requests.get(key, file);
      const sizeExpected = expectedSize ?? length;
      if (sizeExpected !== undefined && bytes !== sizeExpected)
        throw new IntegrityError(`read ${bytes} bytes where ${sizeExpected} were expected`);
      if (etag !== undefined && /^[0-9a-f]{32}$/.test(etag) && md5 !== etag)
        throw new IntegrityError('its checksum does not match the one the store recorded');
      return bytes;
    });
  }

  /** Every object under a key prefix. */
  async list(keyPrefix: string): Promise<ObjectInfo[]> {
    const { s3, client } = this.sdk();
    const found: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const page = await this.call('list files', () =>
        client.send(
          new s3.ListObjectsV2Command({
            Bucket: this.settings.bucket,
            Prefix: this.fullKey(keyPrefix),
            ...(token !== undefined ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        found.push({
          key: object.Key.slice(this.settings.prefix.length),
          size: object.Size ?? 0,
          modifiedMs: object.LastModified?.getTime() ?? 0,
        });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return found;
  }

  /** Deletes objects, a thousand a request (the API's limit); deleting one already gone is no error. */
  async remove(keys: readonly string[]): Promise<void> {
    const { s3, client } = this.sdk();
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const answer = await this.call('delete files', () =>
        client.send(
          new s3.DeleteObjectsCommand({
            Bucket: this.settings.bucket,
            Delete: { Objects: batch.map((key) => ({ Key: this.fullKey(key) })), Quiet: true },
          }),
        ),
      );
      if ((answer.Errors ?? []).length > 0)
        throw unavailable('delete files', `${answer.Errors?.length} of ${batch.length} were not deleted`);
    }
  }

  /** Reachable, and the bucket there (readiness). */
  async check(): Promise<void> {
    const { s3, client } = this.sdk();
    await this.call('reach the bucket', () => client.send(new s3.HeadBucketCommand({ Bucket: this.settings.bucket })));
  }

  private async call<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof LakeServiceError) throw error;
      const name = (error as { name?: string }).name;
      if (name === 'NoSuchKey' || name === 'NotFound') throw new MissingObject();
      if (error instanceof IntegrityError) throw unavailable(what, error.message);
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429)
        throw refused(what, describeStoreError(error));
      throw unavailable(what, describeStoreError(error));
    }
  }
}

class IntegrityError extends Error {}

/** The store has no object under the key: a form of a result not made yet, or a file the catalog should not name. */
export class MissingObject extends LakeServiceError {
  constructor() {
    super(
      'service_unavailable',
      "A file the lake's catalog names is not in its object store. The operator should check that LAKE_DATA_URL names the bucket and prefix this lake was written to.",
      { retryAfterSeconds: RETRY_AFTER_SECONDS },
    );
  }
}

function unavailable(what: string, reason: string): LakeServiceError {
  return new LakeServiceError(
    'service_unavailable',
    `Lake could not ${what} in its object store (${reason}); try again shortly. If it persists, the operator should check LAKE_DATA_URL, the endpoint and the store's credentials.`,
    { retryAfterSeconds: RETRY_AFTER_SECONDS },
  );
}

/** The store answered, and said no: credentials, permissions or the bucket are wrong, which waiting does not mend. */
function refused(what: string, reason: string): LakeServiceError {
  return new LakeServiceError(
    'service_unavailable',
    `Lake could not ${what} in its object store: the store refused (${reason}). The operator should check LAKE_DATA_URL (bucket and prefix) and the store's credentials and permissions.`,
  );
}

const ignore = (): void => undefined;
const QUIET = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/** What went wrong, without the host, bucket, key or credentials an SDK or network message may carry. */
export function describeStoreError(error: unknown): string {
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (e.code !== undefined && /^E[A-Z]+$/.test(e.code)) return `network: ${e.code}`;
  if (e.name === 'TimeoutError' || e.name === 'RequestTimeout') return 'it did not answer in time';
  const name = e.name !== undefined && /^[A-Za-z]+$/.test(e.name) ? e.name : 'error';
  return status !== undefined ? `${name}, HTTP ${status}` : name;
}
