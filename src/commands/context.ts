import { ProfileStore } from '../config/profiles.js';
import { resolveConnectionSettings, type ConnectionSettings } from '../config/settings.js';
import type { IOStreams } from '../render/iostreams.js';
import { terminalSafe } from '../render/terminal-text.js';
import type { LakeClient } from '../client/lake-client.js';
import { installInProcessFetchClasses } from '../client/in-process-fetch-classes.js';
import { packageVersion } from '../support/version.js';
import { CliError, EXIT } from './exit-codes.js';

/** Options every command accepts, wherever they stand on the command line. */
export interface GlobalOptions {
  home?: string;
  baseUrl?: string;
  token?: string;
  profile?: string;
  json?: boolean;
  /** false with --no-pager. */
  pager?: boolean;
  color?: boolean;
}

/**
 * What commands are built from (the Factory of gh): streams, environment, settings and a client, each made on
 * first use so `lake --help` loads none of them. Tests build one with their own streams and environment.
 */
export class CommandContext {
  globals: GlobalOptions = {};
  /** A command sets this for outcomes that are not errors but not plain success, such as "still running". */
  exitCode: number = EXIT.ok;
  private profileStore: ProfileStore | undefined;
  private clientPromise: Promise<LakeClient> | undefined;
  private readonly closers: (() => void | Promise<void>)[] = [];
  /** local: the embedded lake in this process; remote: a service at a base URL. Known once the client exists. */
  mode: 'local' | 'remote' | undefined;
  private localRunsSyncs = true;
  /**
   * This command is the whole process (bin/lake.js), not a test's call of main: its local lake may then give the
   * process light fetch classes of its own (decision 67), which nothing else in it will meet.
   */
  ownsProcess = false;
  /** --json was on the command line: known before parsing, so even a usage error can be said as JSON. */
  jsonRequested = false;

  constructor(
    readonly io: IOStreams,
    readonly env: Record<string, string | undefined>,
  ) {}

  /** Set by `lake auth login`, which makes the profile it names: a new one is not an error there. */
  profileMayBeNew = false;

  get json(): boolean {
    return this.globals.json === true;
  }

  profiles(): ProfileStore {
    this.profileStore ??= ProfileStore.open(this.env);
    return this.profileStore;
  }

  profileName(store: ProfileStore): string {
    return this.globals.profile ?? this.env.LAKE_PROFILE ?? store.currentName();
  }

  async settings(): Promise<ConnectionSettings> {
    const store = this.profiles();
    const profileName = this.profileName(store);
    if (this.globals.profile && !this.profileMayBeNew && !store.names().includes(profileName)) {
      throw new CliError(
        'profile_not_found',
        `There is no profile '${profileName}'.`,
        EXIT.usage,
        'List profiles with `lake config ls`.',
      );
    }
    return resolveConnectionSettings({
      flags: { baseUrl: this.globals.baseUrl, token: this.globals.token, home: this.globals.home },
      env: this.env,
      profile: store.profile(profileName),
    });
  }

  /** The API client: remote when a base URL is set, else the local lake in this process. */
  client(): Promise<LakeClient> {
    this.clientPromise ??= this.makeClient();
    return this.clientPromise;
  }

  /**
   * The local lake is to be opened without running syncs (lake sync start --detach): a lake that runs them would take
   * the sync this command queues and cancel it as the command ends. Only before the client exists, so a command
   * that looks something up first (a source's name) cannot open the lake the other way unnoticed.
   */
  withoutLocalSyncs(): void {
    if (this.clientPromise) throw new Error('withoutLocalSyncs must be called before the client is made.');
    this.localRunsSyncs = false;
  }

  /** Runs when the command finishes, success or not. */
  onClose(closer: () => void | Promise<void>): void {
    this.closers.push(closer);
  }

  async close(): Promise<void> {
    for (const closer of this.closers.splice(0).reverse()) await closer();
  }

  private async makeClient(): Promise<LakeClient> {
    const settings = await this.settings();
    const [{ LakeClient }, transport] = await Promise.all([
      import('../client/lake-client.js'),
      import('../client/transport.js'),
    ]);
    // Always said, even with --json to a pipe: a wait is not progress noise, and a cron log should show why a run was slow.
    const onRetry = ({ delayMs, reason }: { delayMs: number; reason: string }): void => {
      this.io.stderr.write(`lake: ${reason}; retrying in ${(delayMs / 1000).toFixed(1)} s\n`);
    };
    const userAgent = `lake-cli/${packageVersion()}`;
    if (settings.baseUrl.value) {
      assertHttpUrl(settings.baseUrl.value);
      this.mode = 'remote';
      return new LakeClient({
        fetch: await transport.remoteFetch(),
        baseUrl: settings.baseUrl.value,
        token: settings.token.value,
        userAgent,
        onRetry,
      });
    }
    // Before anything makes a Request or a Response: the in-process requests need none of Node's undici.
    if (this.ownsProcess) installInProcessFetchClasses();
    const local = await transport
      .openLocalLake(settings.homeDir.value as string, {
        runSyncs: this.localRunsSyncs,
        env: this.env,
        onLibraryOutput: (text) => this.io.stderr.write(`lake: ${terminalSafe(text)}\n`),
      })
      .catch((error: unknown) => {
        if (error instanceof Error && error.name === 'InvalidSetting')
          throw new CliError(
            'invalid_setting',
            error.message,
            EXIT.usage,
            'Fix the setting and run the command again.',
          );
        throw error;
      });
    this.onClose(local.close);
    this.mode = 'local';
    // Profiles belong to remote services; locally only an explicit flag or LAKE_TOKEN replaces the owner's token.
    const token =
      settings.token.source === 'flag' || settings.token.source === 'env' ? settings.token.value : local.ownerToken;
    return new LakeClient({ fetch: local.fetch, baseUrl: transport.LOCAL_BASE_URL, token, userAgent, onRetry });
  }
}

function assertHttpUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError('invalid_base_url', 'The base URL is not a URL.', EXIT.usage, 'Use the form http://host:port.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError('invalid_base_url', `The base URL must use http or https, not ${url.protocol}`, EXIT.usage);
  }
  // A request cannot be made to a URL that holds credentials (the Fetch standard refuses it): said here, without
  // them, rather than as a service that could not be reached.
  if (url.username !== '' || url.password !== '') {
    throw new CliError(
      'invalid_base_url',
      'The base URL holds a user name or password; lake sends its credential as a token, never in the URL.',
      EXIT.usage,
      'Give the URL as http://host:port and the token with --token or LAKE_TOKEN.',
    );
  }
}
