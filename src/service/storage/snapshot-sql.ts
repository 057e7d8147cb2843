import { quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import type { Snapshot } from './tables.js';

/**
 * A snapshot's layers, oldest first: its files as one layer, unless incremental syncs added layers on top of a
 * base (each layer holds the rows changed since the one before, keyed by `mergeKey`).
 */
export function layersOf(snapshot: Pick<Snapshot, 'files' | 'layers'>): string[][] {
  return snapshot.layers && snapshot.layers.length > 0 ? snapshot.layers : [snapshot.files];
}

/**
 * The SQL that reads a snapshot's rows: its files, or for a layered snapshot each layer's rows whose key no later
 * layer holds (a later layer replaces a row by its key, as Iceberg's and Delta's delete files do), so every key
 * appears once, with its newest values. `toAbsolute` turns the stored paths into the paths to read.
 */
export function snapshotSource(
  snapshot: Pick<Snapshot, 'files' | 'layers' | 'mergeKey' | 'columns'>,
  toAbsolute: (path: string) => string,
): string {
  const rows = layeredRows(snapshot, toAbsolute);
  // Types Parquet does not keep (an ENUM, stored as its labels) are restored, so they compare as at the source.
  const restored = snapshot.columns.filter((c) => c.type.startsWith('ENUM('));
  if (restored.length === 0) return rows;
  return `SELECT * REPLACE (${restored.map((c) => `CAST(${quoteIdentifier(c.name)} AS ${c.type}) AS ${quoteIdentifier(c.name)}`).join(', ')}) FROM (${rows})`;
}

function layeredRows(
  snapshot: Pick<Snapshot, 'files' | 'layers' | 'mergeKey'>,
  toAbsolute: (path: string) => string,
): string {
  const layers = layersOf(snapshot);
  const read = (files: readonly string[]): string =>
    `read_parquet([${files.map((f) => quoteLiteral(toAbsolute(f))).join(', ')}])`;
  if (layers.length === 1) return `SELECT * FROM ${read(layers[0] as string[])}`;
  const key = snapshot.mergeKey ?? [];
  const match = key.map((k) => `n.${quoteIdentifier(k)} = o.${quoteIdentifier(k)}`).join(' AND ');
  return layers
    .map((files, i) => {
      const later = layers.slice(i + 1).flat();
      if (later.length === 0) return `SELECT * FROM ${read(files)}`;
      return `SELECT o.* FROM ${read(files)} o WHERE NOT EXISTS (SELECT 1 FROM ${read(later)} n WHERE ${match})`;
    })
    .join('\nUNION ALL BY NAME\n');
}
