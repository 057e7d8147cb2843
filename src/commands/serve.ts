import type { Command } from 'commander';
import { resolveHomeDir } from '../config/paths.js';
import type { CommandContext } from './context.js';
import { CliError, EXIT, usageError } from './exit-codes.js';

interface ServeOptions {
  host: string;
  port: string;
  publicUrl?: string;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw usageError(`--port must be a whole number from 0 to 65535.`);
  return port;
}

export function registerServe(program: Command, ctx: CommandContext): void {
  program
    .command('serve')
    .description('serve the HTTP API of the local home')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8080')
    .option('--public-url <url>', 'origin for links in responses (download URLs) when behind a proxy')
    .action(async (options: ServeOptions) => {
      const port = parsePort(options.port);
      const [{ parseServerSettings, InvalidSetting }, { startLakeServer }] = await Promise.all([
        import('../service/server/settings.js'),
        import('../service/server/serve.js'),
      ]);
      const log = (line: object): void => {
        ctx.io.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);
      };
      let settings: ReturnType<typeof parseServerSettings>;
      try {
        settings = parseServerSettings(ctx.env, 'serve', {
          homeDir: resolveHomeDir(ctx.globals.home, ctx.env),
          publicUrl: options.publicUrl,
        });
      } catch (error) {
        if (!(error instanceof InvalidSetting)) throw error;
        throw new CliError('invalid_setting', error.message, EXIT.usage, 'Fix the setting and start lake serve again.');
      }
      const server = await startLakeServer(settings, { host: options.host, port }, log);
      log({ level: 'info', msg: 'listening', url: server.url, organization: server.organizationId });

      await new Promise<void>((resolve) => {
        const stop = (signal: NodeJS.Signals): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          log({ level: 'info', msg: 'shutting down', signal });
          void server.stop().then(() => {
            log({ level: 'info', msg: 'stopped' });
            resolve();
          });
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
