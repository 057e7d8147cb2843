import { wholeNumberSetting } from '../core/env-values.js';
import { ClientAddresses } from '../api/client-address.js';
import { connectionLimitsFromEnv, type ConnectionLimits } from '../api/server/connection-gate.js';
import { corsOriginsFromEnv } from '../api/middleware/cors.js';
import type { ServiceOptions } from '../assembly/services.js';
import { workerPoolSettingsFromEnv, type WorkerPoolSettings } from '../engine/worker-settings.js';
import { homeOptionsFromEnv, type HomeOptions } from '../home/home.js';
import { jobSettingsFromEnv, type JobSettings } from '../jobs/settings.js';
import { objectLimitsFromEnv, type ObjectLimits } from '../limits/object-limits.js';
import { rateLimitsFromEnv, type RateLimitSettings } from '../limits/rate-limiter.js';
import { outboundSettingsFromEnv, type OutboundSettings } from '../net/outbound.js';
import { querySettingsFromEnv, type QuerySettings } from '../queries/settings.js';
import type { SendSettings } from '../sends/settings.js';
import { sendSettingsFromEnv } from '../sends/settings.js';
import { gcSettingsFromEnv, type GcSettings } from '../storage/collector.js';
import { syncSettingsFromEnv, type SyncSettings } from '../syncs/settings.js';

/** A setting that cannot be used, named with what is wrong; the server refuses to start with it. */
export class InvalidSetting extends Error {
  override readonly name = 'InvalidSetting';
}

/**
 * Everything a lake server (`lake serve`, or the CLI's local lake) is configured with, parsed once from one
 * environment (the variables listed in src/config/environment.ts), the key files it names, and the command's flags.
 * Local mode builds it from the CLI's own environment, so a command and its server read the same settings.
 */
export interface ServerSettings {
  mode: 'serve' | 'local';
  /** The lake's home directory (--home, LAKE_HOME or the default). */
  homeDir: string;
  home: HomeOptions;
  query: QuerySettings;
  /** lake serve runs queries in worker processes; local mode runs them in its own process. */
  workerPool: WorkerPoolSettings | undefined;
  jobs: JobSettings;
  syncs: SyncSettings;
  /** How many objects of each kind a tenant keeps (LAKE_ORG_MAX_SOURCES and the rest). */
  objects: ObjectLimits;
  sends: Pick<SendSettings, 'webhookRetry'>;
  gc: GcSettings;
  /** Off in local mode: the CLI's own lake never limits the process it runs in. */
  rateLimits: RateLimitSettings | false;
  outbound: OutboundSettings;
  corsOrigins: string[];
  clientAddresses: ClientAddresses;
  /** lake serve's ceilings on open connections (LAKE_MAX_CONNECTIONS, LAKE_MAX_CONNECTIONS_PER_CLIENT). */
  connections: ConnectionLimits | undefined;
  /** LAKE_PRICES_FILE, for usage reports. */
  pricesFile: string | undefined;
  /** Origin for links in responses (--public-url), without a trailing slash. */
  publicUrl: string | undefined;
  /** LAKE_METRICS_ADDR (lake serve): where Prometheus scrapes GET /metrics, apart from the API. */
  metricsAddress: { host: string; port: number } | undefined;
  /** LAKE_METRICS_ORGANIZATIONS: how many organizations get their own `organization` label value (0: none). */
  metricsOrganizations: number;
}

/** Parses every setting, or throws InvalidSetting with the first problem (the variable named in its message). */
export function parseServerSettings(
  env: Record<string, string | undefined>,
  mode: 'serve' | 'local',
  flags: { homeDir: string; publicUrl?: string },
): ServerSettings {
  try {
    const query = querySettingsFromEnv(env);
    return {
      mode,
      homeDir: flags.homeDir,
      home: homeOptionsFromEnv(env),
      query,
      workerPool: mode === 'serve' ? workerPoolSettingsFromEnv(query.memoryLimit, env) : undefined,
      jobs: jobSettingsFromEnv(env),
      syncs: syncSettingsFromEnv(env),
      objects: objectLimitsFromEnv(env),
      sends: sendSettingsFromEnv(env),
      gc: gcSettingsFromEnv(env),
      rateLimits: mode === 'serve' ? rateLimitsFromEnv(env) : false,
      outbound: outboundSettingsFromEnv(env, mode),
      corsOrigins: mode === 'serve' ? corsOriginsFromEnv(env) : [],
      clientAddresses: mode === 'serve' ? ClientAddresses.fromEnv(env) : new ClientAddresses([]),
      connections: mode === 'serve' ? connectionLimitsFromEnv(env) : undefined,
      pricesFile: env.LAKE_PRICES_FILE || undefined,
      publicUrl: flags.publicUrl?.replace(/\/+$/, ''),
      metricsAddress: mode === 'serve' ? metricsAddressFromEnv(env) : undefined,
      metricsOrganizations: wholeNumberSetting(env, 'LAKE_METRICS_ORGANIZATIONS', 0, 10_000),
    };
  } catch (error) {
    throw new InvalidSetting(error instanceof Error ? error.message : String(error));
  }
}

/** What the services are built with, from the settings. */
/** `host:port` (an IPv6 host in brackets); port 0 takes a free one. */
function metricsAddressFromEnv(env: Record<string, string | undefined>): { host: string; port: number } | undefined {
  const raw = env.LAKE_METRICS_ADDR;
  if (raw === undefined || raw === '') return undefined;
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw);
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new Error(`LAKE_METRICS_ADDR must be host:port (127.0.0.1:9464, [::1]:9464), not '${raw}'.`);
  return { host: (match[1] as string).replace(/^\[|\]$/g, ''), port };
}

export function serviceOptions(settings: ServerSettings): ServiceOptions {
  return {
    querySettings: settings.query,
    workerPool: settings.workerPool,
    jobSettings: settings.jobs,
    syncSettings: settings.syncs,
    objectLimits: settings.objects,
    sendSettings: settings.sends,
    gcSettings: settings.gc,
    rateLimits: settings.rateLimits,
    outbound: settings.outbound,
    pricesFile: settings.pricesFile,
  };
}
