import type { ConnectorSettings } from '../connectors/types.js';
import type { SourceRecord } from '../sources/source-store.js';
import type { SlotReport } from './cdc/cdc-sync.js';
import { syncMysql } from './mysql-extract.js';
import { syncPostgres } from './postgres-extract.js';
import { syncSample } from './sample-extract.js';
import type { ExtractionContext, TableResult } from './types.js';

/** What a sync gives the extractor of its source's connector: the tables to read and where they land. */
export interface ExtractInput extends ExtractionContext {
  source: Pick<SourceRecord, 'id' | 'config' | 'tables' | 'cdcSlot'>;
  /** The source's credentials and the address the outbound rules allow, asked only by connectors that connect. */
  connectSettings: () => Promise<ConnectorSettings>;
  /** Told what a source with a change log reports of its position after the sync (null: dropped). */
  onSlot: (slot: SlotReport | null) => Promise<void>;
}

/** Reads a source's tables into the lake, each committed or failed on its own. */
export type Extractor = (input: ExtractInput) => Promise<TableResult[]>;

/** One extractor per connector that syncs: the sync runs it without knowing which database it reads. */
const EXTRACTORS: Readonly<Record<string, Extractor>> = {
  postgres: async (input) =>
    syncPostgres({
      ...input,
      settings: await input.connectSettings(),
      sourceId: input.source.id,
      hadSlot: input.source.cdcSlot !== null,
      cdcTables: input.source.tables.filter((t) => t.mode === 'cdc' && t.enabled),
    }),
  mysql: async (input) => syncMysql({ ...input, settings: await input.connectSettings() }),
  sample: (input) => syncSample({ ...input, scale: Number(input.source.config.scale ?? 1) }),
};

/** The extractor of a connector; undefined for one that does not sync. */
export function extractorFor(connector: string): Extractor | undefined {
  return EXTRACTORS[connector];
}
