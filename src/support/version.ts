import { readFileSync } from 'node:fs';

/** The public contract version, sent as Service-Version and returned by GET /version. Dated, like Stripe's. */
export const API_VERSION = '2026-11-01';

let buildVersion: string | undefined;

/** This build's package version, read once from the package.json above the build output (dist/ or the bundle). */
export function packageVersion(): string {
  if (buildVersion === undefined) {
    for (const candidate of ['../package.json', '../../package.json']) {
      try {
        buildVersion = (
          JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { name: string; version: string }
        ).version;
        break;
      } catch {
        // not here; try one level up
      }
    }
  }
  return buildVersion ?? 'unknown';
}
