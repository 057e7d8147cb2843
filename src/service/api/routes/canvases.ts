import type { Hono } from 'hono';
import type { CanvasDeletionObject, TableDataObject } from '../../../contract/types.js';
import type { ApiEnv } from '../env.js';
import { CANVAS_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { canvasObject, elementObject } from '../wire/canvases.js';

const { createCanvas, listCanvases, getCanvas, deleteCanvas, addCanvasElement, downloadTableData } = CANVAS_ROUTES;

export function canvasRoutes(app: Hono<ApiEnv>): void {
  mount(app, createCanvas, async (c, { body }) => {
    const canvas = await c
      .get('services')
      .canvases.create(c.get('principal'), { name: body.name, elements: body.elements ?? [] });
    c.header('Location', `/canvases/${canvas.id}`);
    return c.json(canvasObject(canvas), 201);
  });
  mount(app, listCanvases, async (c, { query }) => {
    const result = await c.get('services').canvases.list(c.get('principal'), query.limit ?? 20, query.starting_after);
    return c.json(listBody({ data: result.data.map(canvasObject), hasMore: result.hasMore }));
  });
  mount(app, getCanvas, async (c, { params }) => {
    return c.json(canvasObject(await c.get('services').canvases.get(c.get('principal'), params.id)));
  });
  mount(app, deleteCanvas, async (c, { params: { id } }) => {
    await c.get('services').canvases.delete(c.get('principal'), id);
    return c.json({ object: 'canvas_deletion', id, deleted: true } satisfies CanvasDeletionObject);
  });
  mount(app, addCanvasElement, async (c, { params, body }) => {
    const element = await c.get('services').canvases.addElement(c.get('principal'), params.id, body);
    return c.json(elementObject(element), 201);
  });

  /**
   * The legacy table download: a team API key in x-api-key, a JSON body {canvasId, elementId}, the element's
   * table as JSON. Kept for old integrations; new ones use POST /queries.
   */
  mount(app, downloadTableData, async (c, { body }) => {
    const data = await c.get('services').canvases.tableData(c.get('principal'), body.canvasId, body.elementId);
    return c.json({
      object: 'table_data',
      canvas_id: data.canvas.id,
      element_id: data.element.id,
      name: data.element.name,
      columns: data.columns,
      rows: data.rows,
      row_count: data.rowCount,
      returned: data.rows.length,
      truncated: data.rows.length < data.rowCount,
    } satisfies TableDataObject);
  });
}
