import type { Connector, SourceTable } from './types.js';

type DiscoveredTable = Omit<SourceTable, 'enabled' | 'mode' | 'cursorColumn'>;

/** Base row counts; the `scale` setting multiplies them. */
export const SAMPLE_BASE_ROWS = { accounts: 100, invoices: 1000, payments: 800 } as const;

/** The sample source's tables: a small billing system, deterministic so every sync of a scale yields the same rows. */
export function sampleTables(scale: number): DiscoveredTable[] {
  return [
    {
      schema: 'billing',
      name: 'accounts',
      columns: [
        { name: 'account_id', type: 'bigint', nullable: false },
        { name: 'name', type: 'text', nullable: false },
        { name: 'plan', type: 'text', nullable: false },
        { name: 'created_at', type: 'timestamp with time zone', nullable: false },
      ],
      primaryKey: ['account_id'],
      estimatedRows: SAMPLE_BASE_ROWS.accounts * scale,
    },
    {
      schema: 'billing',
      name: 'invoices',
      columns: [
        { name: 'invoice_id', type: 'bigint', nullable: false },
        { name: 'account_id', type: 'bigint', nullable: false },
        { name: 'amount', type: 'numeric(12,2)', nullable: false },
        { name: 'issued_at', type: 'timestamp with time zone', nullable: false },
        { name: 'updated_at', type: 'timestamp with time zone', nullable: false },
      ],
      primaryKey: ['invoice_id'],
      estimatedRows: SAMPLE_BASE_ROWS.invoices * scale,
    },
    {
      schema: 'billing',
      name: 'payments',
      columns: [
        { name: 'payment_id', type: 'bigint', nullable: false },
        { name: 'invoice_id', type: 'bigint', nullable: false },
        { name: 'amount', type: 'numeric(12,2)', nullable: false },
        { name: 'paid_at', type: 'timestamp with time zone', nullable: false },
      ],
      primaryKey: ['payment_id'],
      estimatedRows: SAMPLE_BASE_ROWS.payments * scale,
    },
  ];
}

export const sampleConnector: Connector = {
  name: 'sample',
  title: 'Sample data (no database needed)',
  auth: 'none',
  syncs: true,
  staffOnly: false,
  fields: [
    {
      name: 'scale',
      type: 'integer',
      required: false,
      secret: false,
      description: 'multiplies the row counts (1 = 1,900 rows)',
      default: 1,
      min: 1,
      max: 10_000,
    },
  ],
  discover: async (settings) => sampleTables(Number(settings.config.scale ?? 1)),
};
