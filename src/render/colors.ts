import type { ChalkInstance } from 'chalk';
import type { IOStreams } from './iostreams.js';

/** The few styles lake uses; without colour each returns its text unchanged. */
export interface Palette {
  bold(text: string): string;
  dim(text: string): string;
  red: { bold(text: string): string };
  yellow(text: string): string;
}

const same = (text: string): string => text;
const PLAIN: Palette = { bold: same, dim: same, red: { bold: same }, yellow: same };

let chalk: { Chalk: new (options: { level: 0 | 1 }) => ChalkInstance } | undefined;

/**
 * Loads chalk (~15 ms) only when some stream will show colour; piped output, the common case for scripts,
 * never pays for it. Called once, before a command runs.
 */
export async function prepareColors(io: IOStreams): Promise<void> {
  if (!chalk && (io.colorEnabled('stdout') || io.colorEnabled('stderr'))) chalk = await import('chalk');
}

/** Styles for one stream, following that stream's colour decision. */
export function paletteFor(io: IOStreams, stream: 'stdout' | 'stderr'): Palette {
  if (!chalk || !io.colorEnabled(stream)) return PLAIN;
  return new chalk.Chalk({ level: 1 });
}
