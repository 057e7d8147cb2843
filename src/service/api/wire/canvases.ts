import type { CanvasElementObject, CanvasObject } from '../../../contract/types.js';
import type { Canvas, CanvasElement } from '../../canvases/canvas-store.js';

export const elementObject = (e: CanvasElement): CanvasElementObject => ({
  object: 'canvas_element',
  id: e.id,
  name: e.name,
  kind: e.kind,
  sql: e.sql,
  table: e.table,
  created: e.created,
});

export function canvasObject(canvas: Canvas): CanvasObject {
  return {
    object: 'canvas',
    id: canvas.id,
    name: canvas.name,
    created: canvas.created,
    updated: canvas.updated,
    elements: canvas.elements.map(elementObject),
  };
}
