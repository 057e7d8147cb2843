import type { Command } from 'commander';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';

const routes = async () => (await import('../../contract/routes.js')).CATALOG_ROUTES;

export function registerAdminDuckLake(admin: Command, ctx: CommandContext): void {
  admin
    .command('ducklake')
    .description("print the statement with which DuckDB attaches this organization's lake (DuckLake), read-only")
    .action(async () => {
      const body = await (await ctx.client()).read((await routes()).getDuckLakeAttach, {});
      if (ctx.json) return printJson(ctx.io, body);
      // A pipe gets the statement alone, ready for duckdb; a terminal also gets what it is made of.
      if (!ctx.io.isStdoutTTY) return void ctx.io.stdout.write(`${body.attach};\n`);
      printFields(ctx.io, [
        ['catalog', body.catalog],
        ['metadata schema', body.metadata_schema],
        ['data path', body.data_path],
        ['attach', `${body.attach};`],
      ]);
      ctx.io.stdout.write(
        `\nIn DuckDB: INSTALL ducklake; INSTALL ${body.catalog}; then the ATTACH above. lake owns every write.\n`,
      );
    });
}
