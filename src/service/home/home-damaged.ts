/**
 * A file of the home that lake cannot read as what it is (its metadata database damaged, or replaced by another
 * file). The CLI says which file and what to do (exit 1), not "a bug in lake".
 */
export class HomeDamaged extends Error {
  override readonly name = 'HomeDamaged';

  constructor(
    /** The damaged file. */
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}

/** SQLite's codes for a file that is not a database, or one whose pages are damaged. */
export function isDamagedDatabase(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^SQLITE_(NOTADB|CORRUPT)/.test(code);
}
