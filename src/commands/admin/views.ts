import type { Command } from 'commander';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { openAdminHome } from './open-home.js';

function qualified(text: string, schema?: string): { schema: string; name: string } {
  if (schema !== undefined) return { schema, name: text };
  const dot = text.indexOf('.');
  if (dot <= 0 || dot === text.length - 1)
    throw usageError(`Name the view as <schema>.<name> (or use --schema for names with dots), not '${text}'.`);
  return { schema: text.slice(0, dot), name: text.slice(dot + 1) };
}

export function registerAdminViews(admin: Command, ctx: CommandContext): void {
  const view = admin.command('view').description('logical views: named SQL over lake tables, queryable like tables');

  view
    .command('create')
    .description('create a view, checked like a query (one read-only SELECT over lake tables)')
    .argument('<name>', '<schema>.<name>')
    .requiredOption('--sql <sql>', 'the SELECT that defines it')
    .option('--schema <schema>', 'the schema, when the name itself holds dots')
    .action(async (name: string, options: { sql: string; schema?: string }) => {
      const target = qualified(name, options.schema);
      const { home, services } = await openAdminHome(ctx);
      const created = await services.lake.createView(home.organization.id, target.schema, target.name, options.sql);
      if (ctx.json)
        return printJson(ctx.io, {
          object: 'view',
          id: created.id,
          schema: created.schema,
          name: created.name,
          qualified_name: `lake.${created.schema}.${created.name}`,
          columns: created.columns,
          sql: created.sql,
        });
      printFields(ctx.io, [
        ['view', `lake.${created.schema}.${created.name}`],
        ['columns', created.columns.map((c) => c.name).join(', ')],
      ]);
    });

  view
    .command('drop')
    .description('drop a view (its tables are not touched)')
    .argument('<name>', '<schema>.<name>')
    .option('--schema <schema>', 'the schema, when the name itself holds dots')
    .action(async (name: string, options: { schema?: string }) => {
      const target = qualified(name, options.schema);
      const { home, services } = await openAdminHome(ctx);
      if (!(await services.lake.views.remove(home.organization.id, target.schema, target.name))) {
        throw new CliError('catalog_not_found', `There is no view ${target.schema}.${target.name}.`, EXIT.failed);
      }
      if (ctx.json)
        return printJson(ctx.io, { object: 'view_deletion', schema: target.schema, name: target.name, deleted: true });
      ctx.io.stderr.write(`Dropped view ${target.schema}.${target.name}.\n`);
    });
}
