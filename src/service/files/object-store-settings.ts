/** Where an object store keeps lake's files, and how to reach it (LAKE_DATA_URL and the AWS SDKs' variables). */
export interface ObjectStoreSettings {
  bucket: string;
  /** Key prefix, '' or ending in '/'. */
  prefix: string;
  /** AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL; unset means AWS itself. */
  endpoint?: string;
  region: string;
  /** LAKE_S3_PATH_STYLE=true: http://host/bucket/key instead of http://bucket.host/key (MinIO, most emulators). */
  pathStyle: boolean;
  /** Static keys when AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set; otherwise the SDK's provider chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Files larger than this are uploaded in parts of this size. */
  multipartBytes: number;
}

export const DEFAULT_CACHE_MB = 10_240;
export const DEFAULT_CACHE_BYTES = DEFAULT_CACHE_MB * 1024 * 1024;
export const MULTIPART_BYTES = 16 * 1024 * 1024;

/** The object store named by LAKE_DATA_URL (`s3://bucket/prefix`), or undefined for a local data directory. */
export function objectStoreFromEnv(env: Record<string, string | undefined>): ObjectStoreSettings | undefined {
  const value = (name: string): string | undefined =>
    env[name] === undefined || env[name] === '' ? undefined : env[name];
  const url = value('LAKE_DATA_URL');
  if (url === undefined) return undefined;
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match)
    throw new Error(
      `LAKE_DATA_URL must be s3://<bucket>/<prefix> (a bucket name of 3-63 lower-case letters, digits, '.' and '-'), not '${url}'.`,
    );
  if (value('LAKE_DATA_DIR') !== undefined)
    throw new Error('Set LAKE_DATA_DIR or LAKE_DATA_URL, not both: lake keeps its files in one place.');
  const rawPrefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  const pathStyle = value('LAKE_S3_PATH_STYLE');
  if (pathStyle !== undefined && pathStyle !== 'true' && pathStyle !== 'false')
    throw new Error(`LAKE_S3_PATH_STYLE must be true or false, not '${pathStyle}'.`);
  const accessKeyId = value('AWS_ACCESS_KEY_ID');
  const secretAccessKey = value('AWS_SECRET_ACCESS_KEY');
  const sessionToken = value('AWS_SESSION_TOKEN');
  const endpoint = value('AWS_ENDPOINT_URL_S3') ?? value('AWS_ENDPOINT_URL');
  return {
    bucket: match[1] as string,
    prefix: rawPrefix === '' ? '' : `${rawPrefix}/`,
    ...(endpoint !== undefined ? { endpoint } : {}),
    region: value('AWS_REGION') ?? value('AWS_DEFAULT_REGION') ?? 'us-east-1',
    pathStyle: pathStyle === 'true',
    ...(accessKeyId !== undefined && secretAccessKey !== undefined
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken !== undefined ? { sessionToken } : {}) } }
      : {}),
    multipartBytes: MULTIPART_BYTES,
  };
}

/** LAKE_CACHE_DIR (unset: `cache` in the home, which the home decides) and LAKE_CACHE_MB (default 10,240) in bytes. */
export function cacheFromEnv(env: Record<string, string | undefined>): { dir: string | undefined; maxBytes: number } {
  const dir = env.LAKE_CACHE_DIR === undefined || env.LAKE_CACHE_DIR === '' ? undefined : env.LAKE_CACHE_DIR;
  const raw = env.LAKE_CACHE_MB;
  let mb = DEFAULT_CACHE_MB;
  if (raw !== undefined && raw !== '') {
    mb = Number(raw);
    if (!Number.isInteger(mb) || mb < 1)
      throw new Error(`LAKE_CACHE_MB must be a whole number of megabytes, not '${raw}'.`);
  }
  return { dir, maxBytes: mb * 1024 * 1024 };
}
