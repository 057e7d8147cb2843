import type { Hono } from 'hono';
import type { Canvas, CanvasElement } from '../../canvases/canvas-service.js';
import { LakeServiceError } from '../../errors.js';
import type { ApiEnv } from '../env.js';
import { readJsonObject } from '../json-body.js';
import { authenticate } from '../middleware/authenticate.js';
import { listBody, readPageRequest } from '../pagination.js';

const elementObject = (e: CanvasElement): object => ({ object: 'canvas_element', id: e.id, name: e.name, kind: e.kind, sql: e.sql, table: e.table, created: e.created });

function canvasObject(canvas: Canvas): Record<string, unknown> & { id: string } {
  return { object: 'canvas', id: canvas.id, name: canvas.name, created: canvas.created, updated: canvas.updated, elements: canvas.elements.map(elementObject) };
}

export function canvasRoutes(app: Hono<ApiEnv>): void {
  const read = authenticate({ anyScope: ['canvases:read'] });
  const manage = authenticate({ anyScope: ['canvases:manage'] });

  app.post('/canvases', manage, async (c) => {
    const canvas = await c.get('services').canvases.create(c.get('principal'), await readJsonObject(c));
    c.header('Location', `/canvases/${canvas.id}`);
    return c.json(canvasObject(canvas), 201);
  });
  app.get('/canvases', read, async (c) => {
    const page = readPageRequest(c, { limit: 20, max: 100 });
    const { canvases, visibility } = c.get('services');
    const result = canvases.list(c.get('principal'), page.limit, page.startingAfter);
    const seen = await Promise.all(result.data.map((canvas) => visibility.canvas(c.get('principal'), canvas)));
    return c.json(listBody({ data: seen.map(canvasObject), hasMore: result.hasMore }));
  });
  app.get('/canvases/:id', read, async (c) => {
    const { canvases, visibility } = c.get('services');
    return c.json(canvasObject(await visibility.canvas(c.get('principal'), canvases.get(c.get('principal'), c.req.param('id')))));
  });
  app.post('/canvases/:id/elements', manage, async (c) => {
    const element = await c.get('services').canvases.addElement(c.get('principal'), c.req.param('id'), await readJsonObject(c));
    return c.json(elementObject(element), 201);
  });

  /**
   * The legacy table download: a team API key in x-api-key, a JSON body {canvasId, elementId}, the element's
   * table as JSON. Kept for old integrations; new ones use POST /queries.
   */
  app.post('/data/table', authenticate({ allowTeamKey: true }), async (c) => {
    if (c.get('principal').kind !== 'team_key') {
      throw new LakeServiceError('invalid_credentials', 'This endpoint takes a team API key (tak_…) in the x-api-key header.');
    }
    if (!/^application\/(.+\+)?json\b/i.test((c.req.header('Content-Type') ?? '').trim())) {
      throw new LakeServiceError('invalid_content_type', 'Send the body as JSON with Content-Type: application/json.');
    }
    const body = await readJsonObject(c);
    for (const field of ['canvasId', 'elementId']) {
      if (body[field] === undefined) throw new LakeServiceError('parameter_missing', `The body needs ${field}.`, { param: field });
      if (typeof body[field] !== 'string') throw new LakeServiceError('parameter_invalid', `${field} must be a string.`, { param: field });
    }
    const data = await c.get('services').canvases.tableData(c.get('principal'), body.canvasId as string, body.elementId as string);
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
    });
  });
}
