import type { Script } from 'node:vm';

/** Types of bundle-loader.js, for the tests that load the bundle as `bin/lake.js` does. */
export declare const BUNDLE: string;
export declare const CODE_CACHE: string;
export declare function loadBundle(options?: { useCache?: boolean }): {
  exports: Record<string, unknown>;
  script: Script;
  cacheRejected: boolean;
};
