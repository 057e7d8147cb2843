import type { FieldSpec } from './types.js';

/**
 * Where a database source is and who connects to it: the fields every database connector has. The host and user
 * are credentials (kept encrypted, never returned); they, the port and the database decide where the credentials go.
 */
export function connectionFields(described: {
  user: string;
  password: string;
  port: number;
  database: string;
}): FieldSpec[] {
  return [
    {
      name: 'host',
      type: 'string',
      required: true,
      secret: true,
      destination: true,
      description: 'server host name or address',
    },
    { name: 'user', type: 'string', required: true, secret: true, destination: true, description: described.user },
    { name: 'password', type: 'string', required: false, secret: true, description: described.password },
    {
      name: 'port',
      type: 'integer',
      required: false,
      secret: false,
      destination: true,
      description: 'server port',
      default: described.port,
      min: 1,
      max: 65535,
    },
    {
      name: 'database',
      type: 'string',
      required: true,
      secret: false,
      destination: true,
      description: described.database,
    },
  ];
}

/** How many connections a sync reads over at once, all in one snapshot of the source. */
export const SYNC_CONNECTIONS_FIELD: FieldSpec = {
  name: 'sync_connections',
  type: 'integer',
  required: false,
  secret: false,
  description: 'connections a sync reads tables over at once, all in one snapshot (default: cores − 1, 2 to 3)',
  min: 1,
  max: 8,
};

/** What a row deleted in the source becomes in the lake, where lake sees deletes. */
export const DELETES_FIELD: FieldSpec = {
  name: 'deletes',
  type: 'choice',
  required: false,
  secret: false,
  description:
    'what a row deleted in the source becomes in the lake, where lake sees deletes (detect_deletes): hard removes it; soft keeps it with _deleted_at set',
  default: 'hard',
  choices: ['hard', 'soft'],
};

/** Whether and how the connection is encrypted; it decides where the credentials go too. */
export const SSL_MODE_FIELD: FieldSpec = {
  name: 'ssl_mode',
  type: 'choice',
  required: false,
  secret: false,
  destination: true,
  description: 'disable, require (encrypt, any certificate) or verify-full',
  default: 'disable',
  choices: ['disable', 'require', 'verify-full'],
};
