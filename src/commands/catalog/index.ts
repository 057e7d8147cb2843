import type { Command } from 'commander';
import { printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';
import { assertOutputFlags, pageOptions, printList, printRows, when, type PageOptions } from '../listing.js';
import { groupDigits } from '../../support/group-digits.js';

/** The contract's routes, loaded when a command runs (not for --help). */
const routes = async () => (await import('../../contract/routes.js')).CATALOG_ROUTES;
const at = (seconds: number | null): string => (seconds === null ? '' : when(seconds));

/** `schema.table`, or two arguments when a name itself holds dots. */
function splitName(first: string, second: string | undefined): [string, string] {
  if (second !== undefined) return [first, second];
  const dot = first.indexOf('.');
  if (dot <= 0 || dot === first.length - 1)
    throw usageError(`Name the table as <schema>.<table> (or as two arguments), not '${first}'.`);
  return [first.slice(0, dot), first.slice(dot + 1)];
}

export function registerCatalog(program: Command, ctx: CommandContext): void {
  const catalog = program.command('catalog').description('browse the lake: schemas, tables and views you may read');

  catalog
    .command('ls')
    .description('list schemas, or the tables and views of one schema')
    .argument('[schema]', 'a schema name')
    .option('--output <format>', 'table, vertical, csv, tsv, json, ndjson or markdown')
    .action(async (schema: string | undefined, options: { output?: string }) => {
      assertOutputFlags(ctx, options.output);
      const client = await ctx.client();
      if (schema === undefined) {
        const body = await client.read((await routes()).listSchemas, {});
        if (ctx.json) return printJson(ctx.io, body);
        return printRows(
          ctx,
          options.output,
          ['schema', 'tables', 'views', 'updated'],
          body.data.map((s) => ({
            schema: s.name,
            tables: s.table_count,
            views: s.view_count,
            updated: at(s.updated),
          })),
        );
      }
      const body = await client.read((await routes()).listTables, { params: { schema } });
      if (ctx.json) return printJson(ctx.io, body);
      await printRows(
        ctx,
        options.output,
        ['name', 'kind', 'columns', 'rows', 'bytes', 'updated'],
        body.data.map((e) => ({
          name: e.name,
          kind: e.kind,
          columns: e.column_count,
          rows: e.row_count,
          bytes: e.bytes,
          updated: at(e.updated),
        })),
      );
    });

  catalog
    .command('describe')
    .description("show a table's or view's columns in order")
    .argument('<table>', '<schema>.<table>, or the schema when the table is given separately')
    .argument('[name]', 'the table, when the schema name holds dots')
    .option('--output <format>', 'table, vertical, csv, tsv, json, ndjson or markdown')
    .action(async (first: string, second: string | undefined, options: { output?: string }) => {
      assertOutputFlags(ctx, options.output);
      const [schema, table] = splitName(first, second);
      const body = await (await ctx.client()).read((await routes()).getTable, { params: { schema, table } });
      if (ctx.json) return printJson(ctx.io, body);
      if (ctx.io.isStdoutTTY) {
        const size =
          body.kind === 'table'
            ? `${groupDigits(body.row_count ?? 0)} rows, ${groupDigits(body.bytes ?? 0)} bytes, `
            : '';
        ctx.io.stdout.write(`${body.qualified_name} (${body.kind}; ${size}updated ${at(body.updated)})\n`);
      }
      await printRows(
        ctx,
        options.output,
        ['column', 'type', 'nullable'],
        body.columns.map((c) => ({ column: c.name, type: c.type, nullable: c.nullable })),
      );
      if (ctx.io.isStdoutTTY && body.sql) ctx.io.stdout.write(`\n${body.sql}\n`);
    });

  pageOptions(
    catalog
      .command('history')
      .description("list a table's versions within retention, newest first: what AT (VERSION => n) reads")
      .argument('<table>', '<schema>.<table>, or the schema when the table is given separately')
      .argument('[name]', 'the table, when the schema name holds dots'),
  ).action(async (first: string, second: string | undefined, options: PageOptions) => {
    const [schema, table] = splitName(first, second);
    await printList(ctx, options, {
      route: (await routes()).getTableHistory,
      params: { schema, table },
      columns: ['version', 'created', 'operation', 'rows'],
      row: (v) => ({ version: v.snapshot_id, created: at(v.created), operation: v.operation, rows: v.row_count }),
    });
  });
}
