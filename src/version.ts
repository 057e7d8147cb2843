import { readFileSync } from 'node:fs';

/** The public contract version, sent as Service-Version and returned by GET /version. Dated, like Stripe's. */
export const API_VERSION = '2026-11-01';

let buildVersion: string | undefined;

/** This build's package version, read once from package.json beside the build output. */
export function packageVersion(): string {
  buildVersion ??= (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return buildVersion;
}
