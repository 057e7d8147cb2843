import type { FetchFunction } from './lake-client.js';

/** The base URL local-mode requests carry; they never leave the process, so it only has to be well-formed. */
export const LOCAL_BASE_URL = 'http://local.lake';

export interface LocalLake {
  fetch: FetchFunction;
  ownerToken: string;
  /** Lets queries started by this process finish, then closes the home. */
  close(): Promise<void>;
}

/**
 * The local lake: the real API app over the home, called through its own fetch handler with no socket. Loaded
 * lazily because it brings in SQLite and the app.
 */
export async function openLocalLake(
  homeDir: string,
  options: {
    runSyncs?: boolean;
    env?: Record<string, string | undefined>;
    /** Where a line a library prints on its own goes (a driver's console output, Node's warnings): never a stack. */
    onLibraryOutput?: (text: string) => void;
  } = {},
): Promise<LocalLake> {
  const [
    { openHome },
    { createServices },
    { createApp },
    { parseServerSettings, serviceOptions },
    { routeStrayOutput },
    { homeLog },
  ] = await Promise.all([
    import('../service/home/home.js'),
    import('../service/assembly/services.js'),
    import('../service/api/server/app.js'),
    import('../service/server/settings.js'),
    import('../service/server/stray-output.js'),
    import('../service/home/home-log.js'),
  ]);
  // The CLI's own environment, never the process's: a command and its local lake read the same settings.
  const settings = parseServerSettings(options.env ?? {}, 'local', { homeDir });
  // A home whose metadata is on a shared PostgreSQL store (LAKE_METADATA_URL) is the same lake as its replicas'.
  const home = await openHome(homeDir, settings.home);
  // What lake serve would log of its failures goes to the home's log, where an unexpected error's message points.
  const { file: logFile, log } = homeLog(home.paths.root);
  const services = await createServices(home, {
    ...serviceOptions(settings),
    runSyncs: options.runSyncs ?? true,
    log,
  });
  const app = createApp(services, { routing: 'one-shot', log, unexpectedErrorDetails: logFile });
  // The sources a command reads may make their drivers print (a MySQL server that breaks its protocol makes mysql2
  // print a stack): a line of lake's own instead, as lake serve logs one.
  const onLibraryOutput = options.onLibraryOutput;
  const restoreOutput = onLibraryOutput
    ? routeStrayOutput((line) => onLibraryOutput(libraryLine(line as { msg: string; text?: string; count?: number })))
    : () => {};
  return {
    fetch: (request) => Promise.resolve(app.fetch(request)),
    ownerToken: home.ownerToken,
    async close() {
      try {
        await services.close();
        await home.close();
      } finally {
        restoreOutput();
      }
    },
  };
}

/** A remote service over undici, with keep-alive connections. */
export async function remoteFetch(): Promise<FetchFunction> {
  const { fetch } = await import('undici');
  // undici's fetch wants its own Request class, not Node's global one, so the request is passed as its parts.
  return async (request) => {
    const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const response = await fetch(request.url, {
      method: request.method,
      headers: [...request.headers],
      body,
      signal: request.signal,
    });
    return response as unknown as Response;
  };
}

/** One line of what a library printed, or of how many lines were left out. */
function libraryLine(line: { msg: string; text?: string; count?: number }): string {
  return line.text !== undefined ? `a library printed: ${line.text}` : `${line.count ?? 0} more library lines left out`;
}
