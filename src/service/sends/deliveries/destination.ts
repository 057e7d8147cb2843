import { randomBytes } from 'node:crypto';
import { LakeServiceError } from '../../core/errors.js';

/** What a send delivers to, as stored and shown. Credentials are not here: they are sealed apart and write-only. */
export type Destination = PostgresDestination | WebhookDestination;

export interface PostgresDestination {
  type: 'postgres';
  port: number;
  database: string;
  ssl_mode: 'disable' | 'require' | 'verify-full';
  schema: string;
  table: string;
  /** upsert: insert or update rows by `key`; replace: the table's rows become exactly the result. */
  mode: 'upsert' | 'replace';
  key: string[];
}

export interface WebhookDestination {
  type: 'webhook';
  url: string;
  format: 'json' | 'ndjson';
  batch_size: number;
}

export interface CheckedDestination {
  destination: Destination;
  secrets: Record<string, string>;
  /** A signing secret the service made, to be shown once in the create response. */
  generatedSecret?: string;
}

const invalid = (param: string, message: string): LakeServiceError =>
  new LakeServiceError('parameter_invalid', message, { param });
const missing = (param: string, message: string): LakeServiceError =>
  new LakeServiceError('parameter_missing', message, { param });
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

function text(
  body: Record<string, unknown>,
  name: string,
  options: { required: boolean; fallback?: string },
): string | undefined {
  const value = body[name];
  const param = `destination.${name}`;
  if (value === undefined) {
    if (options.required) throw missing(param, `${param} is required.`);
    return options.fallback;
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > 1000)
    throw invalid(param, `${param} must be a non-empty string.`);
  return value;
}

function choice<T extends string>(body: Record<string, unknown>, name: string, choices: readonly T[], fallback: T): T {
  const value = body[name] ?? fallback;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value))
    throw invalid(`destination.${name}`, `destination.${name} must be one of ${choices.join(', ')}.`);
  return value as T;
}

function identifier(body: Record<string, unknown>, name: string, fallback?: string): string {
  const value = text(body, name, { required: fallback === undefined, fallback }) as string;
  if (!IDENTIFIER.test(value))
    throw invalid(
      `destination.${name}`,
      `destination.${name} must be a plain identifier (letters, digits, _), not '${value.slice(0, 64)}'.`,
    );
  return value;
}

function onlyKnown(body: Record<string, unknown>, known: readonly string[], type: string): void {
  for (const key of Object.keys(body)) {
    if (!known.includes(key)) throw invalid(`destination.${key}`, `Unknown field '${key}' for a ${type} destination.`);
  }
}

function checkPostgres(body: Record<string, unknown>): CheckedDestination {
  onlyKnown(
    body,
    ['type', 'host', 'port', 'database', 'user', 'password', 'ssl_mode', 'schema', 'table', 'mode', 'key'],
    'postgres',
  );
  const port = body.port ?? 5432;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    throw invalid('destination.port', 'destination.port must be a whole number from 1 to 65535.');
  const mode = choice(body, 'mode', ['upsert', 'replace'] as const, 'upsert');
  let key: string[] = [];
  if (body.key !== undefined) {
    if (
      !Array.isArray(body.key) ||
      body.key.length === 0 ||
      !body.key.every((k) => typeof k === 'string' && IDENTIFIER.test(k))
    ) {
      throw invalid('destination.key', 'destination.key must be a non-empty list of column names.');
    }
    key = body.key as string[];
  }
  if (mode === 'upsert' && key.length === 0)
    throw missing('destination.key', 'An upsert needs destination.key: the columns that identify a row.');
  const secrets: Record<string, string> = {
    host: text(body, 'host', { required: true }) as string,
    user: text(body, 'user', { required: true }) as string,
  };
  if (body.password !== undefined) secrets.password = text(body, 'password', { required: false }) as string;
  return {
    destination: {
      type: 'postgres',
      port,
      database: text(body, 'database', { required: true }) as string,
      ssl_mode: choice(body, 'ssl_mode', ['disable', 'require', 'verify-full'] as const, 'disable'),
      schema: identifier(body, 'schema', 'public'),
      table: identifier(body, 'table'),
      mode,
      key,
    },
    secrets,
  };
}

function checkWebhook(body: Record<string, unknown>): CheckedDestination {
  onlyKnown(body, ['type', 'url', 'format', 'batch_size', 'secret'], 'webhook');
  const url = text(body, 'url', { required: true }) as string;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('destination.url', 'destination.url must be an absolute http:// or https:// URL.');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw invalid('destination.url', 'destination.url must be an absolute http:// or https:// URL.');
  if (parsed.username || parsed.password)
    throw invalid('destination.url', 'destination.url must not carry a user or password; requests are signed instead.');
  const batchSize = body.batch_size ?? 500;
  if (typeof batchSize !== 'number' || !Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw invalid('destination.batch_size', 'destination.batch_size must be a whole number from 1 to 10000.');
  }
  const given = body.secret === undefined ? undefined : (text(body, 'secret', { required: false }) as string);
  if (given !== undefined && given.length < 16)
    throw invalid('destination.secret', 'destination.secret must be at least 16 characters.');
  const secret = given ?? `whsec_${randomBytes(24).toString('hex')}`;
  return {
    destination: {
      type: 'webhook',
      url: parsed.toString(),
      format: choice(body, 'format', ['json', 'ndjson'] as const, 'json'),
      batch_size: batchSize,
    },
    secrets: { secret },
    generatedSecret: given === undefined ? secret : undefined,
  };
}

/** A destination as asked for: its type, and the fields of that type (checked here, each refusal naming its field). */
export type DestinationInput = { type: 'postgres' | 'webhook' } & Record<string, unknown>;

/** Checks a new send's destination; every refusal names the field. */
export function checkDestination(value: DestinationInput): CheckedDestination {
  return value.type === 'postgres' ? checkPostgres(value) : checkWebhook(value);
}
