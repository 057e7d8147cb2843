import { LakeApiError, LakeConnectionError } from '../service/client/errors.js';
import { LakeServiceError } from '../service/errors.js';

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
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export function usageError(message: string, hint?: string): CliError {
  return new CliError('usage', message, EXIT.usage, hint);
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof LakeConnectionError) return EXIT.unavailable;
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
