/**
 * The layering of src/ (README, "Architecture"), checked in npm test:
 *   commands → render / client → api → assembly → domain services → jobs runtime, stores, engine → core → contract
 * A layer imports only the layers below it, and no two folders import each other.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const DOMAIN =
  '^src/service/(auth|canvases|catalog|connectors|files|home|idempotency|jobs|limits|logs|net|queries|sends|sources|storage|syncs|usage)/';

module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      severity: 'error',
      comment: 'Folders of src/ never import each other in a cycle: a change to one must not ripple back into itself.',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-module-cycles',
      severity: 'error',
      comment: 'Two modules that import each other are one module in two files: merge them or cut the loop.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'routes-do-not-touch-stores',
      severity: 'error',
      comment: 'A route parses, calls one service method and builds the wire object; SQL and stores are the services’.',
      from: { path: '^src/service/api/(routes|middleware)/' },
      to: { path: ['^src/service/store/', '(-store|/store)\\.ts$'] },
    },
    {
      name: 'wire-reads-record-types-only',
      severity: 'error',
      comment:
        'Wire builders turn a service’s records into API objects: they may name a record type, never call a store.',
      from: { path: '^src/service/api/wire/' },
      to: { path: ['^src/service/store/', '(-store|/store)\\.ts$'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'contract-stands-alone',
      severity: 'error',
      comment: 'The contract (schemas, types, OpenAPI) is the bottom layer: everything may read it, it reads nothing.',
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: '^src/(contract|support)/' },
    },
    {
      name: 'support-stands-alone',
      severity: 'error',
      from: { path: '^src/support/' },
      to: { path: '^src/', pathNot: '^src/support/' },
    },
    {
      name: 'services-know-nothing-of-http-or-the-terminal',
      severity: 'error',
      comment: 'Domain services take typed inputs and return data; the API, the CLI and the renderers sit above them.',
      from: { path: [DOMAIN, '^src/service/(core|store|engine|assembly)/'] },
      to: { path: ['^src/(commands|render|client)/', '^src/cli\\.ts$', '^src/service/(api|server)/'] },
    },
    {
      name: 'stores-and-engine-below-the-domain',
      severity: 'error',
      comment: 'Stores and the engine serve every domain service and so import none of them.',
      from: { path: '^src/service/(store|engine|core)/' },
      to: { path: [DOMAIN, '^src/service/assembly/'] },
    },
    {
      name: 'api-below-the-cli',
      severity: 'error',
      from: { path: '^src/service/(api|server)/' },
      to: { path: ['^src/(commands|render|client)/', '^src/cli\\.ts$'] },
    },
    {
      name: 'render-and-client-below-commands',
      severity: 'error',
      comment: 'Renderers draw and the client calls the API; neither knows which command uses it.',
      from: { path: '^src/(render|client)/' },
      to: { path: ['^src/commands/', '^src/cli\\.ts$'] },
    },
    {
      name: 'render-draws-only',
      severity: 'error',
      comment: 'Renderers draw data they are given: they never reach the services.',
      from: { path: '^src/render/' },
      to: { path: '^src/service/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    includeOnly: '^src/',
  },
};
