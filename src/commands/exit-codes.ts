import { NoHomeDirectory } from '../config/paths.js';
import { ConflictingSettings, PRECEDENCE_RULE } from '../config/settings.js';
import { LakeApiError, LakeConnectionError, LakeRequestError } from '../client/errors.js';
import { LakeServiceError } from '../service/core/errors.js';
import { HomeDamaged } from '../service/home/home-damaged.js';
import { HomeSettingError } from '../service/home/home-setting-error.js';
import { MetadataStoreUnreachable } from '../service/home/metadata-store-error.js';
import { isDiskFull } from '../support/disk-full.js';
import { FolderUnusable } from '../support/private-folder.js';

/** Every exit code lake uses; README lists the same table. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  stillRunning: 3,
  auth: 4,
  unavailable: 5,
  interrupted: 130,
} as const;

/** The one error type of the CLI layer, for problems found before or beside the API (flags, files, config). */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number = EXIT.failed,
    readonly hint?: string,
    /** Ids the error is about, printed with it (`query` for a failed query). */
    readonly about: Record<string, string> = {},
    /** The request whose answer reported the error (a failed query's last poll), for the operator's logs. */
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export function usageError(message: string, hint?: string): CliError {
  return new CliError('usage', message, EXIT.usage, hint);
}

/**
 * Failures of the environment a command runs in, said as the CLI says errors (code, message, what to do) instead
 * of "unexpected_error … a bug in lake".
 */
export function asCliError(error: unknown): unknown {
  if (error instanceof ConflictingSettings)
    return new CliError('conflicting_settings', error.message, EXIT.usage, `Give one of them. ${PRECEDENCE_RULE}`);
  if (error instanceof NoHomeDirectory)
    return new CliError(
      'no_home',
      error.message,
      EXIT.usage,
      'Say where the lake is with --home DIR or LAKE_HOME (or set HOME).',
    );
  if (error instanceof HomeSettingError)
    return new CliError(
      'invalid_setting',
      error.message,
      EXIT.usage,
      `Set ${error.setting} as said, then run the command again.`,
    );
  if (error instanceof HomeDamaged)
    return new CliError(
      'home_damaged',
      error.message,
      EXIT.failed,
      `Restore ${error.file} from a backup of the home, or move the home aside (lake makes a new, empty one at first use).`,
    );
  if (error instanceof MetadataStoreUnreachable)
    return new CliError(
      'metadata_store_unavailable',
      error.message,
      EXIT.unavailable,
      'Check that the PostgreSQL server LAKE_METADATA_URL names is up and that this machine reaches it (host and port), then run the command again.',
    );
  if (isDiskFull(error))
    return new CliError(
      'disk_full',
      'The disk that holds the lake home is full: lake could not write its metadata or files there, and the command did not complete.',
      EXIT.failed,
      'Free space on that disk, then run the command again.',
    );
  if (error instanceof FolderUnusable)
    return new CliError(
      'folder_unusable',
      error.message,
      EXIT.usage,
      `Choose another ${error.setting}: a folder this user can create and write.`,
    );
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    const { address, port } = error as { address?: string; port?: number };
    const where = `${address ?? 'the address'}:${port ?? '?'}`;
    const why =
      code === 'EADDRINUSE'
        ? `${where} is already in use`
        : code === 'EACCES'
          ? `${where} needs privileges this user lacks`
          : `${where} is not an address of this machine`;
    return new CliError(
      'address_unavailable',
      `lake serve cannot listen: ${why}.`,
      EXIT.failed,
      code === 'EADDRINUSE' ? 'Choose another --port, or stop what listens there.' : 'Choose another --host or --port.',
    );
  }
  return error;
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof LakeConnectionError) return EXIT.unavailable;
  if (error instanceof LakeRequestError) return EXIT.usage;
  if (error instanceof LakeApiError) {
    if (error.status === 401 || error.status === 403) return EXIT.auth;
    if (error.status === 429 || error.status >= 500) return EXIT.unavailable;
    return EXIT.failed;
  }
  if (error instanceof LakeServiceError) {
    return error.code === 'parameter_invalid' || error.code === 'parameter_missing' ? EXIT.usage : EXIT.failed;
  }
  return EXIT.failed;
}
