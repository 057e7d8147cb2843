import type { IOStreams } from './iostreams.js';
import { paletteFor } from './colors.js';
import { terminalSafe } from './terminal-text.js';
import { valueToText } from './values.js';

export type Field = [label: string, value: unknown];

/**
 * Prints one resource as label/value pairs: aligned and coloured on a terminal, `label<TAB>value` lines in a pipe
 * so that `cut -f2` and `awk` work. With --json the command prints the API object instead.
 */
export function printFields(io: IOStreams, fields: readonly Field[]): void {
  if (!io.isStdoutTTY) {
    io.stdout.write(fields.map(([label, value]) => `${label}\t${valueToText(value)}\n`).join(''));
    return;
  }
  const palette = paletteFor(io, 'stdout');
  const width = Math.max(...fields.map(([label]) => label.length));
  io.stdout.write(
    fields
      .map(
        ([label, value]) =>
          `${palette.dim(`${terminalSafe(label)}:`.padEnd(width + 2))}${terminalSafe(valueToText(value))}\n`,
      )
      .join(''),
  );
}

export function printJson(io: IOStreams, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
