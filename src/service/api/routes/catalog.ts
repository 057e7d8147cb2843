import type { Hono } from 'hono';
import type { DuckLakeAttachObject, TableVersionObject } from '../../../contract/types.js';
import type { ApiEnv } from '../env.js';
import { schemaObject, summaryObject, tableObject } from '../wire/catalog.js';
import { CATALOG_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';

const { listSchemas, listTables, getTable, getTableHistory, getDuckLakeAttach } = CATALOG_ROUTES;

const list = (data: object[]): object => ({ object: 'list', data, has_more: false, next_cursor: null });

export function catalogRoutes(app: Hono<ApiEnv>): void {
  mount(app, listSchemas, async (c) =>
    c.json(list((await c.get('services').catalog.schemas(c.get('principal'))).map(schemaObject))),
  );
  // Path segments arrive decoded, so schema and table names may hold dots, spaces or (encoded) slashes.
  mount(app, listTables, async (c, { params }) =>
    c.json(list((await c.get('services').catalog.entries(c.get('principal'), params.schema)).map(summaryObject))),
  );
  mount(app, getTableHistory, async (c, { params, query }) => {
    const page = await c
      .get('services')
      .catalog.history(c.get('principal'), params.schema, params.table, query.limit ?? 20, query.starting_after);
    return c.json(
      listBody(
        {
          data: page.data.map((v): TableVersionObject => ({
            object: 'table_version',
            snapshot_id: v.snapshot,
            created: v.created,
            operation: v.operation,
            row_count: v.rowCount,
          })),
          hasMore: page.hasMore,
        },
        // A version's cursor is its snapshot id, as text like every cursor.
        (v) => String(v.snapshot_id),
      ),
    );
  });
  mount(app, getDuckLakeAttach, async (c) => {
    const attach = await c.get('services').ducklakeAttach.describe(c.get('principal'));
    return c.json({
      object: 'ducklake_attach',
      catalog: attach.catalog,
      attach: attach.attach,
      metadata_schema: attach.metadataSchema,
      data_path: attach.dataPath,
    } satisfies DuckLakeAttachObject);
  });
  mount(app, getTable, async (c, { params }) =>
    c.json(tableObject(await c.get('services').catalog.describe(c.get('principal'), params.schema, params.table))),
  );
}
