import { readFileSync } from 'node:fs';
import type { CommandContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';

/**
 * Text a command reads (SQL from a file or a pipe, a JSON body from a file): UTF-8, decoded once as a whole, so a
 * character split across two reads of a pipe stays one character; a byte that is not UTF-8 (a file saved as Latin-1,
 * say) is refused rather than read as U+FFFD, which would change the SQL and its answers without a word. A UTF-8
 * byte-order mark at the start is dropped.
 */
export function utf8Text(bytes: Uint8Array, what: string, secret = false): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const at = firstInvalidByte(bytes);
    const byte = bytes[at] ?? 0;
    // A secret's bytes are never shown, not even the one that is wrong.
    const which = secret ? 'a byte' : `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    throw new CliError(
      'file_not_utf8',
      `${what} is not UTF-8 text: ${which} at byte ${at + 1} is no character there.`,
      EXIT.usage,
      'Save it as UTF-8 (iconv -f latin1 -t utf-8, or your editor’s encoding setting), then run the command again.',
    );
  }
}

/** A file's text (utf8Text); a file that cannot be read is file_unreadable, naming why. */
export function readTextFile(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new CliError(
      'file_unreadable',
      `Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}.`,
      EXIT.usage,
    );
  }
  return utf8Text(bytes, file);
}

/** Everything on standard input, as text (utf8Text); `secret` for a password or a token. */
export async function readStdinText(ctx: CommandContext, secret = false): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return utf8Text(Buffer.concat(chunks), 'standard input', secret);
}

/** Where the first byte that does not begin a well-formed UTF-8 character is (only called on text that has one). */
function firstInvalidByte(bytes: Uint8Array): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let start = 0;
  while (start < bytes.length) {
    const lead = bytes[start] as number;
    const length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
    if (length === 0) return start;
    try {
      decoder.decode(bytes.subarray(start, start + length));
    } catch {
      return start;
    }
    start += length;
  }
  return Math.max(0, bytes.length - 1);
}
