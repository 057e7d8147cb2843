import { openSandbox, type Sandbox, type SandboxSpec } from './sandbox.js';

/**
 * Keeps the sandbox of the last query for the next one when both would be locked down identically: the same
 * catalog file, the same readable and writable directories, the same limits. Creating a DuckDB instance costs
 * ~8 ms of CPU, more than a small query itself; two queries of one organization with the same access need not
 * pay it twice. Anything that differs, or a query that was interrupted, gets a fresh instance (docs/decisions.md).
 */
export class SandboxCache {
  private kept: { key: string; pool: SandboxSpec['pool']; sandbox: Sandbox } | undefined;

  async open(spec: SandboxSpec): Promise<Sandbox> {
    const key = keyOf(spec);
    const kept = this.kept;
    this.kept = undefined;
    // One pool per set of limits (sharedInstancePool): the same pool means the same limits.
    if (kept?.key === key && kept.pool === spec.pool) return kept.sandbox;
    kept?.sandbox.close();
    return openSandbox(spec);
  }

  /** Hands a sandbox back after a query that ended by itself; the previous one kept, if any, is closed. */
  keep(spec: SandboxSpec, sandbox: Sandbox): void {
    this.kept?.sandbox.close();
    this.kept = { key: keyOf(spec), pool: spec.pool, sandbox };
  }

  /** True while a sandbox waits here for the next query. */
  holds(): boolean {
    return this.kept !== undefined;
  }

  close(): void {
    this.kept?.sandbox.close();
    this.kept = undefined;
  }
}

function keyOf(spec: SandboxSpec): string {
  return JSON.stringify([spec.catalogFile, [...spec.readableDirs].sort(), spec.writableDir]);
}
