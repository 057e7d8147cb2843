import { mysqlConnector } from './mysql.js';
import { postgresConnector } from './postgres.js';
import { sampleConnector } from './sample.js';
import type { Connector } from './types.js';

const oauth = (name: string, title: string): Connector => ({
  name,
  title,
  auth: 'oauth',
  syncs: true,
  staffOnly: false,
  fields: [],
});

/** Every connector lake knows. Only key-configured, syncing, public, current ones can be created through POST /sources. */
export const CONNECTORS: readonly Connector[] = [
  postgresConnector,
  mysqlConnector,
  sampleConnector,
  oauth('salesforce', 'Salesforce'),
  oauth('hubspot', 'HubSpot'),
  oauth('google_sheets', 'Google Sheets'),
  {
    name: 'internal_audit',
    title: 'Internal audit log (staff only)',
    auth: 'key',
    syncs: true,
    staffOnly: true,
    fields: [],
  },
  {
    name: 'postgresql',
    title: 'PostgreSQL (legacy name)',
    auth: 'key',
    syncs: true,
    staffOnly: false,
    aliasOf: 'postgres',
    fields: postgresConnector.fields,
  },
  {
    name: 'webhook_receiver',
    title: 'Webhook receiver (push only, does not sync)',
    auth: 'key',
    syncs: false,
    staffOnly: false,
    fields: [],
  },
];

export function findConnector(name: string): Connector | undefined {
  return CONNECTORS.find((c) => c.name === name);
}

/** Why POST /sources refuses this connector, or undefined when it accepts it. */
export function refusalFor(connector: Connector): string | undefined {
  if (connector.auth === 'oauth') {
    return `${connector.title} connects with OAuth: authorize it through the brokered authorization flow, not this endpoint. OAuth secrets are never accepted in a request body.`;
  }
  if (connector.staffOnly) return `${connector.title} is available to lake staff only.`;
  if (connector.aliasOf)
    return `'${connector.name}' is a legacy name; create the source with connector '${connector.aliasOf}'.`;
  if (!connector.syncs) return `${connector.title} does not sync data into the lake, so it cannot be a source.`;
  return undefined;
}
