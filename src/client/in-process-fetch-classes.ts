/**
 * Headers, Request and Response for the CLI's local lake, whose requests never leave the process (decision 67).
 * Node 20 builds its own fetch classes from its copy of undici the first time a program names one, and that costs a
 * local command ~20 ms of its start (compiling and running all of undici: its client, pools and dispatchers, which
 * a request passed straight to the app's fetch handler never uses). These classes keep the parts of the Fetch
 * standard that the app (Hono), its middleware and lake's client use: header names and values checked and folded as
 * the standard says, bodies read once, streams passed through. They are installed only by a one-shot CLI process
 * before anything has used Node's own (`installInProcessFetchClasses`); `lake serve` and the tests keep Node's.
 */

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_IN_VALUE = /[\0\r\n]/;
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const NORMALIZED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
const encoder = new TextEncoder();

type HeaderPairs = Iterable<readonly [string, string] | readonly string[]> | Record<string, string>;

export class InProcessHeaders {
  readonly #values = new Map<string, string[]>();

  constructor(init?: HeaderPairs | null) {
    if (init === undefined || init === null) return;
    if (typeof init !== 'object') throw new TypeError('Headers: the initial headers must be an object.');
    if (Symbol.iterator in init) {
      for (const pair of init as Iterable<readonly string[]>) {
        const parts = [...pair];
        if (parts.length !== 2) throw new TypeError('Headers: each header must be a name and a value.');
        this.append(parts[0] as string, parts[1] as string);
      }
      return;
    }
    for (const [name, value] of Object.entries(init)) this.append(name, value);
  }

  append(name: string, value: string): void {
    const key = headerName(name);
    const values = this.#values.get(key);
    if (values) values.push(headerValue(key, value));
    else this.#values.set(key, [headerValue(key, value)]);
  }

  set(name: string, value: string): void {
    const key = headerName(name);
    this.#values.set(key, [headerValue(key, value)]);
  }

  get(name: string): string | null {
    return this.#values.get(headerName(name))?.join(', ') ?? null;
  }

  has(name: string): boolean {
    return this.#values.has(headerName(name));
  }

  delete(name: string): void {
    this.#values.delete(headerName(name));
  }

  getSetCookie(): string[] {
    return [...(this.#values.get('set-cookie') ?? [])];
  }

  /** Sorted by name, values of one name joined, except set-cookie's, as the standard iterates. */
  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#values.keys()].sort()) {
      const values = this.#values.get(name) ?? [];
      if (name === 'set-cookie') for (const value of values) yield [name, value];
      else yield [name, values.join(', ')];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: string, name: string, headers: InProcessHeaders) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }
}

function headerName(name: string): string {
  const text = String(name);
  if (!HEADER_NAME.test(text)) throw new TypeError(`Headers: "${text}" is not a valid header name.`);
  return text.toLowerCase();
}

function headerValue(name: string, value: string): string {
  const given = String(value);
  // A ByteString, as the standard's IDL has it: a character past U+00FF cannot be a byte of a header.
  if (BEYOND_LATIN1.test(given)) throw new TypeError(`Headers: the value of ${name} holds a character past U+00FF.`);
  const text = given.replace(EDGE_WHITESPACE, '');
  if (FORBIDDEN_IN_VALUE.test(text)) throw new TypeError(`Headers: the value of ${name} is not a valid header value.`);
  return text;
}

type StoredBody = Uint8Array | ReadableStream<Uint8Array> | null;

/** A body as the standard extracts it: bytes (copied) or a stream, and the content type it implies. */
function extractBody(body: unknown): { stored: StoredBody; contentType: string | null } {
  if (body === undefined || body === null) return { stored: null, contentType: null };
  if (typeof body === 'string') return { stored: encoder.encode(body), contentType: 'text/plain;charset=UTF-8' };
  if (body instanceof ArrayBuffer) return { stored: new Uint8Array(body.slice(0)), contentType: null };
  if (ArrayBuffer.isView(body)) {
    const view = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    return { stored: view.slice(), contentType: null };
  }
  if (body instanceof URLSearchParams) {
    return { stored: encoder.encode(body.toString()), contentType: 'application/x-www-form-urlencoded;charset=UTF-8' };
  }
  if (body instanceof Blob) return { stored: body.stream(), contentType: body.type === '' ? null : body.type };
  if (isReadableStream(body)) return { stored: body, contentType: null };
  if (typeof body === 'object' && Symbol.toStringTag in body && body[Symbol.toStringTag] === 'FormData') {
    // Nothing in lake sends a form; refusing is clearer than a multipart encoder of our own.
    throw new TypeError('A form body is not supported by the in-process transport.');
  }
  return { stored: encoder.encode(String(body)), contentType: 'text/plain;charset=UTF-8' };
}

/** Without naming the global ReadableStream, whose first use loads Node's web streams (a sync answer needs none). */
function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { getReader?: unknown }).getReader === 'function' &&
    typeof (value as { tee?: unknown }).tee === 'function'
  );
}

function bytesStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

/** What Request and Response share: a body that can be read once, as bytes, text, JSON, a Blob or a stream. */
abstract class InProcessBody {
  #body: StoredBody;
  #used = false;
  protected readonly contentType: () => string | null;

  protected constructor(body: StoredBody, contentType: () => string | null) {
    this.#body = body;
    this.contentType = contentType;
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.#body instanceof Uint8Array) this.#body = bytesStream(this.#body);
    return this.#body;
  }

  get bodyUsed(): boolean {
    return this.#used || (isReadableStream(this.#body) && isDisturbed(this.#body));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.consume();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.arrayBuffer());
  }

  async text(): Promise<string> {
    // TextDecoder drops a leading byte order mark, as the standard's UTF-8 decode does.
    return new TextDecoder().decode(await this.consume());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.consume()], { type: this.contentType() ?? '' });
  }

  formData(): Promise<never> {
    return Promise.reject(new TypeError('A form body is not supported by the in-process transport.'));
  }

  /** The body for a copy of this message: the same bytes, or one branch of the stream (this keeps the other). */
  protected bodyForClone(): StoredBody {
    if (this.bodyUsed) throw new TypeError('Body has already been read.');
    if (this.#body === null || this.#body instanceof Uint8Array) return this.#body;
    const [mine, theirs] = this.#body.tee();
    this.#body = mine;
    return theirs;
  }

  /** The body for a new message built from this one, which takes it over (the standard's transfer). */
  protected takeBody(): StoredBody {
    if (this.bodyUsed) throw new TypeError('Body has already been read.');
    const body = this.#body;
    if (body !== null) this.#used = true;
    return body;
  }

  private async consume(): Promise<Uint8Array> {
    if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read.');
    this.#used = true;
    const body = this.#body;
    if (body === null) return new Uint8Array(0);
    if (body instanceof Uint8Array) return body;
    return readAll(body);
  }
}

/** A stream is disturbed once someone has taken a reader of it; a locked stream is the visible sign of that. */
function isDisturbed(stream: ReadableStream<Uint8Array>): boolean {
  return stream.locked;
}

interface ResponseOptions {
  status?: number;
  statusText?: string;
  headers?: HeaderPairs | InProcessHeaders;
}

export class InProcessResponse extends InProcessBody {
  readonly status: number;
  readonly statusText: string;
  readonly headers: InProcessHeaders;
  readonly type: string = 'default';
  readonly url: string = '';
  readonly redirected = false;

  constructor(body?: unknown, init: ResponseOptions = {}) {
    const status = init.status ?? 200;
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new RangeError(`Response: ${status} is not a status between 200 and 599.`);
    }
    if (body !== undefined && body !== null && NULL_BODY_STATUSES.has(status)) {
      throw new TypeError(`Response: a ${status} response cannot have a body.`);
    }
    const { stored, contentType } = extractBody(body);
    const headers = new InProcessHeaders(init.headers as HeaderPairs | undefined);
    if (contentType !== null && !headers.has('content-type')) headers.set('content-type', contentType);
    super(stored, () => headers.get('content-type'));
    this.status = status;
    this.statusText = init.statusText ?? '';
    this.headers = headers;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  clone(): InProcessResponse {
    return new InProcessResponse(this.bodyForClone(), this);
  }

  static json(data: unknown, init: ResponseOptions = {}): InProcessResponse {
    const headers = new InProcessHeaders(init.headers as HeaderPairs | undefined);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    return new InProcessResponse(JSON.stringify(data), { ...init, headers });
  }

  static redirect(url: string | URL, status = 302): InProcessResponse {
    if (![301, 302, 303, 307, 308].includes(status)) throw new RangeError(`Response: ${status} is not a redirect.`);
    return new InProcessResponse(null, { status, headers: { location: new URL(String(url)).href } });
  }
}

interface RequestOptions {
  method?: string;
  headers?: HeaderPairs | InProcessHeaders;
  body?: unknown;
  signal?: AbortSignal | null;
}

export class InProcessRequest extends InProcessBody {
  readonly url: string;
  readonly method: string;
  readonly headers: InProcessHeaders;
  readonly signal: AbortSignal;
  readonly redirect: string = 'follow';

  constructor(input: string | URL | InProcessRequest, init: RequestOptions = {}) {
    const from = input instanceof InProcessRequest ? input : undefined;
    const url = new URL(from ? from.url : String(input)).href;
    const method = requestMethod(init.method ?? from?.method ?? 'GET');
    const headers = new InProcessHeaders((init.headers ?? from?.headers) as HeaderPairs | undefined);
    let stored: StoredBody = null;
    if (init.body !== undefined && init.body !== null) {
      if (method === 'GET' || method === 'HEAD')
        throw new TypeError(`Request: a ${method} request cannot have a body.`);
      const extracted = extractBody(init.body);
      stored = extracted.stored;
      if (extracted.contentType !== null && !headers.has('content-type')) {
        headers.set('content-type', extracted.contentType);
      }
    } else if (init.body === undefined && from) {
      stored = from.takeBody();
    }
    super(stored, () => headers.get('content-type'));
    this.url = url;
    this.method = method;
    this.headers = headers;
    this.signal = init.signal ?? from?.signal ?? new AbortController().signal;
  }

  clone(): InProcessRequest {
    return new InProcessRequest(this.url, {
      method: this.method,
      headers: this.headers,
      body: this.bodyForClone(),
      signal: this.signal,
    });
  }
}

function requestMethod(method: string): string {
  if (!HEADER_NAME.test(method)) throw new TypeError(`Request: "${method}" is not a valid method.`);
  const upper = method.toUpperCase();
  if (upper === 'CONNECT' || upper === 'TRACE' || upper === 'TRACK') {
    throw new TypeError(`Request: the ${upper} method is not allowed.`);
  }
  return NORMALIZED_METHODS.has(upper) ? upper : method;
}

const NAMES = ['Headers', 'Request', 'Response'] as const;
const CLASSES = { Headers: InProcessHeaders, Request: InProcessRequest, Response: InProcessResponse };

/**
 * Makes these classes the process's Headers, Request and Response, only while Node has not built its own (each is
 * still its lazy getter): a program that has already made one of Node's keeps all three, so no object of one set
 * ever meets the other. Returns whether they were installed.
 */
export function installInProcessFetchClasses(target: object = globalThis): boolean {
  const untouched = NAMES.every((name) => typeof Object.getOwnPropertyDescriptor(target, name)?.get === 'function');
  if (!untouched) return false;
  for (const name of NAMES) {
    Object.defineProperty(target, name, { value: CLASSES[name], writable: true, configurable: true });
  }
  return true;
}
