import { ERROR_CODES } from './errors.js';
import { Nullable, OneOf, OneOfList, Strict, Timestamp, Type } from './schema.js';

export const Version = Strict({
  object: Type.Literal('version'),
  version: Type.String({ description: 'The API version (a date).' }),
  server_version: Type.String({ description: 'The version of lake serving it.' }),
});

export const Health = Strict({
  object: Type.Literal('health'),
  status: Type.Literal('ok', { description: 'The process answers: restart it when this fails.' }),
});

export const Readiness = Strict({
  object: Type.Literal('readiness'),
  status: Type.Literal('ready', {
    description:
      'The server can take work: its metadata store answers, its data directory is writable or its object store answers, and it is not shutting down.',
  }),
});

export const ErrorType = OneOf([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'rate_limit_error',
  'api_error',
]);

export const ErrorCodeName = OneOfList(ERROR_CODES);

export const ErrorEnvelope = Strict(
  {
    error: Strict({
      type: ErrorType,
      code: ErrorCodeName,
      message: Type.String(),
      param: Type.Optional(Type.String({ description: 'The input the error concerns, when it concerns one.' })),
      doc_url: Type.String(),
      request_id: Type.String({ pattern: '^req_', description: 'The same as the Request-Id header.' }),
    }),
  },
  'Every error response.',
);

export const ErrorCodeInfo = Strict({
  object: Type.Literal('error_code'),
  code: ErrorCodeName,
  status: Type.Integer(),
  type: ErrorType,
  description: Type.String(),
  doc_url: Type.String(),
});

const UsageQuantities = Strict({
  queries_run: Type.Integer(),
  result_bytes: Type.Integer(),
  rows_synced: Type.Integer(),
  rows_sent: Type.Integer(),
});

export const Usage = Strict({
  object: Type.Literal('usage'),
  month: Type.String({ pattern: '^\\d{4}-\\d{2}$' }),
  currency: Type.Literal('USD'),
  days: Type.Array(
    Strict({
      date: Type.String(),
      queries_run: Type.Integer(),
      result_bytes: Type.Integer(),
      rows_synced: Type.Integer(),
      rows_sent: Type.Integer(),
      cost: Type.Number(),
    }),
  ),
  totals: UsageQuantities,
  by_tag: Type.Array(
    Strict({
      tag: Type.String(),
      queries_run: Type.Integer(),
      result_bytes: Type.Integer(),
      cost: Type.Number(),
    }),
    {
      description:
        'The month’s queries and result bytes per query tag (a query with several tags counts toward each), with their cost.',
    },
  ),
  storage_bytes: Type.Integer(),
  prices: Strict({
    queries_run: Type.Number(),
    result_bytes_per_gb: Type.Number(),
    rows_synced_per_million: Type.Number(),
    rows_sent_per_million: Type.Number(),
    storage_per_gb_month: Type.Number(),
  }),
  cost: Strict({
    month_to_date: Type.Number(),
    projected: Type.Number(),
    days_elapsed: Type.Integer(),
    days_in_month: Type.Integer(),
  }),
});

/** Every action the audit log records, as the services that do them name it. */
export const AUDIT_ACTIONS = [
  'pat.created',
  'pat.revoked',
  'service_key.created',
  'service_key.revoked',
  'team_key.created',
  'team_key.revoked',
  'permissions.enabled',
  'permissions.disabled',
  'grant.created',
  'grant.revoked',
  'source.created',
  'source.credentials_changed',
  'source.destination_changed',
  'source.deleted',
  'send.created',
  'send.updated',
  'send.deleted',
  'organization.created',
  'organization.renamed',
  'organization.deactivated',
  'organization.reactivated',
  'user.created',
  'user.updated',
  'user.role_changed',
  'user.deactivated',
  'user.reactivated',
  'operator_token.created',
  'operator_token.revoked',
  'authentication.failed_burst',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AuditEvent = Strict({
  object: Type.Literal('audit_event'),
  id: Type.String(),
  created: Timestamp,
  action: OneOf(AUDIT_ACTIONS, { description: 'What was done (docs/api.md, GET /audit_events).' }),
  actor: Strict({
    kind: Type.Union([
      Type.Literal('user'),
      Type.Literal('service_key'),
      Type.Literal('team_key'),
      Type.Literal('local_admin'),
      Type.Literal('operator'),
      Type.Literal('anonymous'),
    ]),
    credential: Nullable(Type.String({ description: 'The credential that did it (none for lake admin on the home).' })),
    user: Nullable(Type.String({ description: 'The person behind it, for a personal access token.' })),
    request_id: Nullable(Type.String()),
    client_address: Nullable(Type.String()),
  }),
  organization: Nullable(Type.String({ description: 'The organization it happened in; null for the service’s own.' })),
  target: Strict({ type: Type.String(), id: Type.String() }),
  details: Type.Record(Type.String(), Type.Unknown(), {
    description: 'What changed, by name: never a secret, a password or a token.',
  }),
});
