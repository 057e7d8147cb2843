import { findConnector, refusalFor } from '../connectors/registry.js';
import type { Connector, FieldSpec, SourceTable } from '../connectors/types.js';
import { LakeServiceError } from '../core/errors.js';

const invalid = (param: string, message: string): LakeServiceError =>
  new LakeServiceError('invalid_source_parameters', message, { param });

/** A connector that POST /sources accepts; every refusal names `connector` and says why. */
export function acceptedConnector(value: string): Connector {
  const connector = findConnector(value);
  if (!connector)
    throw invalid('connector', `There is no connector '${value.slice(0, 64)}'. The connectors list names them.`);
  const refusal = refusalFor(connector);
  if (refusal) throw invalid('connector', refusal);
  return connector;
}

function checkValue(field: FieldSpec, value: unknown, param: string): unknown {
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string' || value.length === 0 || value.length > 1000)
        throw invalid(param, `${param} must be a non-empty string.`);
      return value;
    case 'choice':
      if (typeof value !== 'string' || !field.choices?.includes(value))
        throw invalid(param, `${param} must be one of ${field.choices?.join(', ')}.`);
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw invalid(param, `${param} must be true or false.`);
      return value;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value))
        throw invalid(param, `${param} must be a whole number.`);
      if ((field.min !== undefined && value < field.min) || (field.max !== undefined && value > field.max)) {
        throw invalid(param, `${param} must be from ${field.min} to ${field.max}.`);
      }
      return value;
    case 'string_list':
      if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v.length > 0)) {
        throw invalid(param, `${param} must be a non-empty list of names.`);
      }
      return value;
  }
}

export interface CheckedSettings {
  config: Record<string, unknown>;
  secrets: Record<string, string>;
}

/** Settings as a request gives them: configuration fields, and credentials apart (they are sealed, never shown). */
export interface SettingsInput {
  config?: Record<string, unknown>;
  credentials: Record<string, string>;
}

/**
 * Checks connector settings against the connector's fields. `partial` (a change) checks only what is given;
 * otherwise required fields must be present and defaults fill the rest.
 */
export function checkSettings(connector: Connector, input: SettingsInput, partial: boolean): CheckedSettings {
  const credentialNames = connector.fields.filter((f) => f.secret).map((f) => f.name);
  for (const key of Object.keys(input.credentials)) {
    if (!credentialNames.includes(key)) throw invalid(key, `Unknown field '${key}' for a ${connector.name} source.`);
  }
  const rawConfig = input.config ?? {};
  for (const key of Object.keys(rawConfig)) {
    const field = connector.fields.find((f) => f.name === key);
    if (!field) throw invalid(`config.${key}`, `Unknown configuration field '${key}' for a ${connector.name} source.`);
    if (field.secret)
      throw invalid(
        `config.${key}`,
        `${key} is a credential: send it as a top-level field, not inside config, so it is stored encrypted.`,
      );
  }
  const config: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const field of connector.fields) {
    const given = field.secret ? input.credentials[field.name] : rawConfig[field.name];
    const param = field.secret ? field.name : `config.${field.name}`;
    if (given === undefined || given === null) {
      if (!partial && field.required) throw invalid(param, `${param} is required for a ${connector.name} source.`);
      if (!partial && field.default !== undefined && !field.secret) config[field.name] = field.default;
      continue;
    }
    const value = checkValue(field, given, param);
    if (field.secret) secrets[field.name] = value as string;
    else config[field.name] = value;
  }
  return { config, secrets };
}

export function checkName(value: string): string {
  if (value.trim() === '' || value.length > 200)
    throw invalid('name', 'name must be a non-empty string of at most 200 characters.');
  return value.trim();
}

/** A change to one table's settings (PATCH tables[]). */
export interface TableChange {
  schema: string;
  name: string;
  enabled?: boolean;
  mode?: 'full' | 'incremental' | 'cdc';
  cursor_column?: string | null;
  primary_key?: string[];
  detect_deletes?: boolean;
}

/**
 * Applies PATCH `tables` entries to the current table configuration; each entry must name a discovered table, and
 * ask only for what the source's connector can do (`modes`).
 */
export function applyTableChanges(
  current: readonly SourceTable[],
  changes: readonly TableChange[],
  modes: { connector: string; cdc: boolean; detectDeletes: boolean } = {
    connector: 'postgres',
    cdc: true,
    detectDeletes: true,
  },
): SourceTable[] {
  const next = current.map((t) => ({ ...t, columns: [...t.columns], primaryKey: [...t.primaryKey] }));
  changes.forEach((change, i) => {
    const at = `tables[${i}]`;
    const table = next.find((t) => t.schema === change.schema && t.name === change.name);
    if (!table)
      throw invalid(
        `${at}.name`,
        `The source has no table ${String(change.schema)}.${String(change.name)} (see its tables, or test it to discover again).`,
      );
    // Two entries for one table would leave which change wins to their order: each table is changed once.
    const earlier = changes.findIndex((c) => c.schema === change.schema && c.name === change.name);
    if (earlier < i)
      throw invalid(
        `${at}.name`,
        `tables[${earlier}] changes ${table.schema}.${table.name} already: give each table's changes in one entry.`,
      );
    const columnNames = new Set(table.columns.map((c) => c.name));
    // A table past discovery's column budget lists no columns: its names are checked by the sync, against the source.
    const known = (name: string): boolean => columnNames.has(name) || (table.columnCount ?? 0) > table.columns.length;
    if (change.enabled !== undefined) table.enabled = change.enabled;
    if (change.primary_key !== undefined) {
      if (!change.primary_key.every(known))
        throw invalid(`${at}.primary_key`, 'primary_key must list columns of the table.');
      if (new Set(change.primary_key).size !== change.primary_key.length)
        throw invalid(`${at}.primary_key`, 'primary_key must list each column once.');
      table.primaryKey = change.primary_key;
    }
    if (change.cursor_column !== undefined) {
      if (change.cursor_column !== null && !known(change.cursor_column))
        throw invalid(`${at}.cursor_column`, 'cursor_column must be a column of the table.');
      table.cursorColumn = change.cursor_column;
    }
    if (change.mode === 'cdc' && !modes.cdc)
      throw invalid(
        `${at}.mode`,
        `The ${modes.connector} connector does not read changes from the source's log yet: sync the table incrementally or in full.`,
      );
    if (change.detect_deletes && !modes.detectDeletes)
      throw invalid(
        `${at}.detect_deletes`,
        `The ${modes.connector} connector does not detect deletes yet: a full refresh leaves out the rows deleted in the source.`,
      );
    if (change.mode !== undefined) table.mode = change.mode;
    if (change.detect_deletes !== undefined) {
      if (change.detect_deletes && table.mode !== 'incremental')
        throw invalid(
          `${at}.detect_deletes`,
          'detect_deletes is for incremental tables: a full refresh already leaves out the rows deleted in the source.',
        );
      table.detectDeletes = change.detect_deletes;
    } else if (table.mode !== 'incremental') table.detectDeletes = false;
    if (table.mode === 'cdc' && table.primaryKey.length === 0)
      throw invalid(
        `${at}.primary_key`,
        'A cdc table needs a primary key (its replica identity) to apply changes by: give the table one in the source, or sync it incrementally or in full.',
      );
    if (table.mode === 'incremental') {
      if (!table.cursorColumn)
        throw invalid(
          `${at}.cursor_column`,
          'An incremental table needs a cursor_column, the column that grows with every change.',
        );
      if (table.primaryKey.length === 0)
        throw invalid(`${at}.primary_key`, 'An incremental table needs a primary_key to merge changed rows on.');
    }
  });
  return next;
}
