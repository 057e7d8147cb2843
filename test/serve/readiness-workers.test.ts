import { cpSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A copy of the installation whose query worker exits at once: what a broken deployment looks like. */
function brokenInstallation(): string {
  const copy = tempDir('lake-broken-install');
  for (const entry of ['package.json', 'bin', 'dist'])
    cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  writeFileSync(join(copy, 'dist', 'query-worker.js'), 'process.exit(3);\n');
  return join(copy, 'bin', 'lake.js');
}

describe('/readyz and the query workers', () => {
  let server: ServeProcess;
  beforeAll(async () => {
    server = await startServeProcess({ LAKE_HOME: join(tempDir('lake-ready'), 'home') }, [], brokenInstallation());
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('answers 503 naming the workers while none can start; /healthz stays 200', async () => {
    let answer: Response | undefined;
    for (let i = 0; i < 100; i++) {
      answer = await fetch(`${server.url}/readyz`);
      const body = (await answer.clone().json()) as { error?: { message: string } };
      if (body.error?.message.includes('fail to start')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer?.status).toBe(503);
    expect(answer?.headers.get('retry-after')).toBe('2');
    const body = (await answer?.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.message).toContain('query workers fail to start');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
