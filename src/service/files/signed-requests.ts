import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { requireCommonJs } from '../../support/load-commonjs.js';
import type { ObjectStoreSettings } from './object-store-settings.js';

type Aws4 = typeof import('aws4');
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Tries of one request: a refused connection or a 5xx is tried again after a short wait. */
const ATTEMPTS = 3;

/** An error shaped as the AWS SDK's are (name and HTTP status), so both paths are described alike. */
export class StoreRequestError extends Error {
  constructor(
    name: string,
    readonly $metadata: { httpStatusCode?: number },
    readonly code?: string,
  ) {
    super(name);
    this.name = name;
  }
}

/**
 * Single S3 requests (GET and PUT of one object) signed with aws4 and sent with Node's own http: what a query's path
 * needs (a result's upload, a file's fetch) for a few milliseconds, where loading the AWS SDK costs ~70 ms and its
 * first request ~40 ms more on every CLI process. Listing, deleting, multipart uploads and credentials from
 * anything but keys go through the SDK (S3Objects).
 */
export class SignedRequests {
  private readonly agent: http.Agent;
  private readonly secure: boolean;
  private readonly host: string;
  private readonly port: number | undefined;

  constructor(
    private readonly settings: ObjectStoreSettings,
    private readonly credentials: () => Promise<Credentials>,
  ) {
    const endpoint = new URL(settings.endpoint ?? `https://s3.${settings.region}.amazonaws.com`);
    this.secure = endpoint.protocol === 'https:';
    this.host = settings.pathStyle ? endpoint.hostname : `${settings.bucket}.${endpoint.hostname}`;
    this.port = endpoint.port === '' ? undefined : Number(endpoint.port);
    this.agent = new (this.secure ? https.Agent : http.Agent)({ keepAlive: true });
  }

  /** Uploads a body whole; throws StoreRequestError on a refusal. */
  async put(key: string, body: Buffer): Promise<void> {
    const response = await this.send('PUT', key, body);
    response.resume();
  }

  /**
   * Downloads an object into `file`; returns its bytes and the ETag the store gave. Throws StoreRequestError (name
   * NoSuchKey when there is none).
   */
  async get(key: string, file: string): Promise<{ bytes: number; etag?: string; md5: string; length?: number }> {
    const response = await this.send('GET', key);
    const md5 = createHash('md5');
    let bytes = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        md5.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(response, count, createWriteStream(file, { mode: 0o600 }));
    const length = response.headers['content-length'];
    const etag = response.headers.etag?.replace(/"/g, '');
    return {
      bytes,
      md5: md5.digest('hex'),
      ...(etag !== undefined ? { etag } : {}),
      ...(length !== undefined ? { length: Number(length) } : {}),
    };
  }

  private async send(method: 'GET' | 'PUT', key: string, body?: Buffer): Promise<IncomingMessage> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(method, key, body);
      } catch (error) {
        const status = (error as StoreRequestError).$metadata?.httpStatusCode;
        const retryable = status === undefined || status >= 500 || status === 429 || status === 408;
        if (!retryable || attempt >= ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * 4 ** (attempt - 1)));
      }
    }
  }

  private async once(method: 'GET' | 'PUT', key: string, body?: Buffer): Promise<IncomingMessage> {
    const aws4 = requireCommonJs('aws4') as Aws4;
    const objectPath = `${this.settings.prefix}${key}`.split('/').map(encodeURIComponent).join('/');
    const path = this.settings.pathStyle ? `/${this.settings.bucket}/${objectPath}` : `/${objectPath}`;
    const host = this.port === undefined ? this.host : `${this.host}:${this.port}`;
    const signed = aws4.sign(
      {
        host,
        path,
        method,
        service: 's3',
        region: this.settings.region,
        headers: body ? { 'Content-Length': String(body.length) } : {},
        ...(body ? { body } : {}),
      },
      await this.credentials(),
    );
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = (this.secure ? https : http).request(
        {
          host: this.host,
          ...(this.port !== undefined ? { port: this.port } : {}),
          method,
          path,
          headers: signed.headers as http.OutgoingHttpHeaders,
          agent: this.agent,
          timeout: 60_000,
        },
        (response) => {
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve(response);
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk.length + text.length < 4096 ? chunk : ''));
          response.on('end', () => {
            const code = /<Code>([A-Za-z]+)<\/Code>/.exec(text)?.[1] ?? (status === 404 ? 'NotFound' : 'Error');
            reject(new StoreRequestError(code, { httpStatusCode: status }));
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new StoreRequestError('TimeoutError', {})));
      request.on('error', (error: NodeJS.ErrnoException) =>
        reject(
          error instanceof StoreRequestError ? error : new StoreRequestError('NetworkError', {}, error.code ?? 'ENET'),
        ),
      );
      request.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
