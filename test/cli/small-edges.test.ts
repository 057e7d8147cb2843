import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory } from '../helpers/transports.js';

/** The smaller edges an analyst met on the first afternoon, each as the CLI (or the API) now answers it. */
describe('first-afternoon edges', () => {
  const env = { LAKE_HOME: tempDir('lake-edges') };

  it('an unknown connector is a usage error that names lake connectors ls, not an HTTP route', async () => {
    const result = await runLake(['sources', 'create', '--connector', 'oracle', '--name', 'shop'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("connector_not_found: There is no connector 'oracle'.");
    expect(result.stderr).toContain('lake connectors ls');
    expect(result.stderr).not.toContain('GET /connectors');
  });

  it('lake connectors get shows a connector: its settings, which are credentials, and what each means', async () => {
    const result = await runLake(['connectors', 'get', 'postgres'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/live test\tyes/);
    expect(result.stdout).toMatch(/^host,string,true,true,/m);
    expect((await runLake(['connectors', 'get', 'nope'], { env })).code).toBe(2);
  });

  it("a local-mode error's docs line is a command that works, not a link to nowhere", async () => {
    const failed = await runLake(['sources', 'get', 'src_none'], { env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).not.toContain('http://local.lake');
    const docs = /docs: +(lake help errors (\w+))/.exec(failed.stderr);
    expect(docs, failed.stderr).not.toBeNull();
    const help = await runLake(['help', 'errors', docs?.[2] as string], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`${docs?.[2]} (HTTP 404`);
    expect((await runLake(['help', 'errors'], { env })).stdout).toContain('source_not_found');
  });

  it('GET / points at the reference this server serves', async () => {
    const api = await inMemory.start();
    try {
      const response = await api.request('/');
      expect(response.status).toBe(404);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('route_not_found');
      expect(body.error.message).toContain('/reference');
    } finally {
      await api.close();
    }
  });
});
