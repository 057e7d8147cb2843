import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLake } from './cli.js';
import { startServeProcess, type ServeProcess } from './serve.js';
import { tempDir } from './temp.js';

export interface ReplicaSet {
  /** The owner token `lake init --metadata-url` printed. */
  token: string;
  /** The service operator's token from the same `lake init`. */
  operatorToken: string;
  replicas: ServeProcess[];
  /** Starts one more replica like the others (its own home, the shared store, data and keys). */
  start(n: number): Promise<ServeProcess>;
  stop(): Promise<void>;
}

/**
 * N `lake serve` processes, each with its own home, sharing one PostgreSQL metadata database, one data directory
 * and the two key files, bootstrapped by `lake init --metadata-url`: what docs/operations.md describes for replicas
 * behind a load balancer.
 */
export async function startReplicaSet(
  metadataUrl: string,
  count: number,
  settings: Record<string, string> = {},
): Promise<ReplicaSet> {
  const keys = tempDir('lake-keys');
  for (const name of ['signing.key', 'secrets.key'])
    writeFileSync(join(keys, name), randomBytes(32).toString('hex'), { mode: 0o600 });
  const env = {
    LAKE_METADATA_URL: metadataUrl,
    LAKE_DATA_DIR: join(tempDir('lake-shared'), 'data'),
    LAKE_SIGNING_KEY_FILE: join(keys, 'signing.key'),
    LAKE_SECRETS_KEY_FILE: join(keys, 'secrets.key'),
    LAKE_QUERY_WORKERS: '2',
    LAKE_QUERY_THREADS: '1',
    ...settings,
  };
  const init = await runLake(['init', '--json', '--metadata-url', metadataUrl], {
    env: { ...env, LAKE_HOME: join(tempDir('lake-admin'), 'home') },
  });
  if (init.code !== 0) throw new Error(`lake init --metadata-url failed: ${init.stderr}`);
  const printed = JSON.parse(init.stdout) as { token: { secret: string }; operator_token: { secret: string } };
  const token = printed.token.secret;
  const start = (n: number): Promise<ServeProcess> =>
    startServeProcess({ ...env, LAKE_HOME: join(tempDir('lake-replica'), `home${n}`) });
  const replicas = await Promise.all(Array.from({ length: count }, (_, i) => start(i + 1)));
  return {
    token,
    operatorToken: printed.operator_token.secret,
    replicas,
    start,
    stop: async () => {
      await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
    },
  };
}
