import { outboundSettingsFromEnv } from '../service/net/outbound.js';
import type { Command } from 'commander';
import { resolveHomeDir } from '../config/paths.js';
import type { CommandContext } from './context.js';
import { CliError, EXIT, usageError } from './exit-codes.js';

/** How long a stopping server lets requests and queries in flight finish. */
const SHUTDOWN_GRACE_MS = 10_000;

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
      const [{ openHome, homeOptionsFromEnv }, { createServices }, { createApp }, { startServer }] = await Promise.all([
        import('../service/home/home.js'),
        import('../service/assembly/services.js'),
        import('../service/api/server/app.js'),
        import('../service/api/server/server.js'),
      ]);
      const log = (line: object): void => {
        ctx.io.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);
      };
      const { corsOriginsFromEnv, InvalidCorsOrigin } = await import('../service/api/middleware/cors.js');
      let corsOrigins: string[];
      try {
        corsOrigins = corsOriginsFromEnv(ctx.env);
      } catch (error) {
        if (error instanceof InvalidCorsOrigin)
          throw new CliError(
            'invalid_setting',
            error.message,
            EXIT.usage,
            'Fix LAKE_CORS_ORIGINS and start lake serve again.',
          );
        throw error;
      }
      const { ClientAddresses } = await import('../service/api/client-address.js');
      let clientAddresses: InstanceType<typeof ClientAddresses>;
      try {
        clientAddresses = ClientAddresses.fromEnv(ctx.env);
      } catch (error) {
        throw new CliError(
          'invalid_setting',
          (error as Error).message,
          EXIT.usage,
          'Fix LAKE_TRUSTED_PROXIES and start lake serve again.',
        );
      }
      const home = await openHome(resolveHomeDir(ctx.globals.home, ctx.env), homeOptionsFromEnv(ctx.env));
      ctx.onClose(home.close);
      const { querySettingsFromEnv } = await import('../service/queries/settings.js');
      const { workerPoolSettingsFromEnv } = await import('../service/engine/worker-settings.js');
      const querySettings = querySettingsFromEnv(ctx.env);
      // In lake serve no query SQL runs in this process: a pool of worker processes runs every DuckDB step of it.
      const { syncSettingsFromEnv } = await import('../service/syncs/settings.js');
      let syncSettings: ReturnType<typeof syncSettingsFromEnv>;
      try {
        syncSettings = syncSettingsFromEnv(ctx.env);
      } catch (error) {
        throw new CliError(
          'invalid_setting',
          (error as Error).message,
          EXIT.usage,
          'Fix the setting and start lake serve again.',
        );
      }
      const services = await createServices(home, {
        publicUrl: options.publicUrl,
        querySettings,
        syncSettings,
        workerPool: workerPoolSettingsFromEnv(querySettings.memoryLimit, ctx.env),
        outbound: outboundSettingsFromEnv(ctx.env, 'serve'),
        log,
      });
      services.queries.warm();
      services.startBackgroundWork();
      ctx.onClose(() => services.close(SHUTDOWN_GRACE_MS));
      const server = await startServer(createApp(services, { log, corsOrigins, clientAddresses }), {
        host: options.host,
        port,
        log,
        publicOrigin: () => services.publicUrl,
      });
      // Links in responses never follow a request's Host header: without --public-url they name this address.
      services.publicUrl ??= server.url.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://[::1]:');
      if (!options.publicUrl && /:\/\/(0\.0\.0\.0|\[::\])/.test(server.url)) {
        log({
          level: 'warn',
          msg: 'listening on every address without --public-url: links in responses name 127.0.0.1; set --public-url to the address clients use',
        });
      }
      log({ level: 'info', msg: 'listening', url: server.url, organization: home.organization.id });

      await new Promise<void>((resolve) => {
        const stop = (signal: NodeJS.Signals): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          log({ level: 'info', msg: 'shutting down', signal });
          // Event streams would hold the server open until they time out; end them first.
          services.stopStreams();
          void server.close().then(() => {
            log({ level: 'info', msg: 'stopped' });
            resolve();
          });
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
