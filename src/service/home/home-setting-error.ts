/**
 * A setting a home cannot be opened without, or one that names what is not there: the key files every replica of a
 * shared PostgreSQL store reads. The CLI says it as a setting to fix (exit 2), not as a failure of lake's own.
 */
export class HomeSettingError extends Error {
  override readonly name = 'HomeSettingError';

  constructor(
    /** The environment variable to set. */
    readonly setting: string,
    message: string,
  ) {
    super(message);
  }
}
