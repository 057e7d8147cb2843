import { pageOptions, type PageOptions } from '../listing.js';
import type { Command } from 'commander';
import { printFields, printJson } from '../../render/record.js';
import type { CanvasObject } from '../../contract/types.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';

/** The contract's routes, loaded when a command runs (not for --help). */
const routes = async () => (await import('../../contract/routes.js')).CANVAS_ROUTES;

function show(ctx: CommandContext, canvas: CanvasObject): void {
  if (ctx.json) return printJson(ctx.io, canvas);
  printFields(ctx.io, [
    ['id', canvas.id],
    ['name', canvas.name],
    ...canvas.elements.map((e) => [e.id, `${e.name}: ${e.kind === 'table' ? e.table : e.sql}`] as [string, unknown]),
  ]);
}

export function registerCanvas(program: Command, ctx: CommandContext): void {
  const canvas = program
    .command('canvas')
    .description('canvases: named boards of table elements (saved queries or lake tables)');
  const idOf = async (ref: string): Promise<string> => (await import('../resolve.js')).resolveId(ctx, 'canvas', ref);

  canvas
    .command('create')
    .description('create a canvas')
    .requiredOption('--name <name>', 'its name')
    .action(async (o: { name: string }) =>
      show(ctx, await (await ctx.client()).read((await routes()).createCanvas, { body: { name: o.name } })),
    );

  canvas
    .command('add')
    .description('add a table element: a saved query (--sql) or a lake table (--table schema.table)')
    .argument('<canvas>', 'canvas id (cnv_…) or name')
    .requiredOption('--name <name>', "the element's name")
    .option('--sql <sql>', 'a saved read-only query')
    .option('--table <schema.table>', 'a lake table')
    .action(async (id: string, o: { name: string; sql?: string; table?: string }) => {
      if ((o.sql === undefined) === (o.table === undefined)) throw usageError('Give either --sql or --table.');
      const element = await (
        await ctx.client()
      ).read((await routes()).addCanvasElement, {
        params: { id: await idOf(id) },
        body: { name: o.name, ...(o.sql ? { sql: o.sql } : { table: o.table }) },
      });
      if (ctx.json) return printJson(ctx.io, element);
      ctx.io.stdout.write(`${element.id}\n`);
    });

  pageOptions(canvas.command('ls').description('list canvases, newest first')).action(async (o: PageOptions) => {
    const { printList } = await import('../listing.js');
    await printList(ctx, o, {
      route: (await routes()).listCanvases,
      columns: ['id', 'name', 'elements'],
      row: (c) => ({ id: c.id, name: c.name, elements: c.elements.length }),
    });
  });

  canvas
    .command('delete')
    .description('delete a canvas and its elements (the tables they read stay)')
    .argument('<canvas>', 'canvas id or name')
    .action(async (ref: string) => {
      const id = await idOf(ref);
      const deleted = await (await ctx.client()).read((await routes()).deleteCanvas, { params: { id } });
      if (ctx.json) return printJson(ctx.io, deleted);
      ctx.io.stderr.write(`lake: deleted canvas ${id}\n`);
    });

  canvas
    .command('get')
    .description('show a canvas and its elements')
    .argument('<canvas>', 'canvas id or name')
    .action(async (id: string) =>
      show(ctx, await (await ctx.client()).read((await routes()).getCanvas, { params: { id: await idOf(id) } })),
    );
}
