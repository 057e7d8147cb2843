/** The API's routes: Canvases. */
import { Canvas, CanvasCreation, CanvasElement, ElementInput, TableData, TableDataRequest } from './canvases.js';
import { defineRoute } from './route.js';
import { List } from './schema.js';
import { id, page, cursorErrors, json } from './route-helpers.js';

export const CANVAS_ROUTES = {
  createCanvas: defineRoute({
    operationId: 'createCanvas',
    method: 'post',
    path: '/canvases',
    tag: 'Canvases',
    summary: 'Create a canvas',
    auth: { scopes: ['canvases:manage'] },
    body: CanvasCreation,
    responses: { 201: json('The canvas.', Canvas, ['Location']) },
    errors: ['grant_table_denied'],
  }),
  listCanvases: defineRoute({
    operationId: 'listCanvases',
    method: 'get',
    path: '/canvases',
    tag: 'Canvases',
    summary: 'List canvases',
    auth: { scopes: ['canvases:read'] },
    query: page(),
    paramErrors: cursorErrors,
    responses: { 200: json('A page of canvases.', List(Canvas)) },
    errors: ['invalid_cursor'],
  }),
  getCanvas: defineRoute({
    operationId: 'getCanvas',
    method: 'get',
    path: '/canvases/{id}',
    tag: 'Canvases',
    summary: 'Get a canvas',
    auth: { scopes: ['canvases:read'] },
    params: id('A canvas id (cnv_…).'),
    responses: { 200: json('The canvas.', Canvas) },
    errors: ['canvas_not_found'],
  }),
  addCanvasElement: defineRoute({
    operationId: 'addCanvasElement',
    method: 'post',
    path: '/canvases/{id}/elements',
    tag: 'Canvases',
    summary: 'Add a table element',
    auth: { scopes: ['canvases:manage'] },
    params: id('A canvas id.'),
    body: ElementInput,
    responses: { 201: json('The element.', CanvasElement) },
    errors: ['canvas_not_found', 'creator_required', 'grant_table_denied', 'canvas_full'],
  }),
  downloadTableData: defineRoute({
    operationId: 'downloadTableData',
    method: 'post',
    path: '/data/table',
    tag: 'Canvases',
    summary: "Legacy: a canvas element's table, with a team API key",
    auth: { teamKey: 'only' },
    body: TableDataRequest,
    responses: { 200: json("The element's rows.", TableData) },
    errors: ['canvas_not_found', 'element_not_found', 'element_query_failed'],
  }),
};
