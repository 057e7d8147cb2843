import { Chalk, type ChalkInstance } from 'chalk';
import type { IOStreams } from './iostreams.js';

/** A chalk bound to one stream's colour decision, so piped output never carries escape codes. */
export function paletteFor(io: IOStreams, stream: 'stdout' | 'stderr'): ChalkInstance {
  return new Chalk({ level: io.colorEnabled(stream) ? 1 : 0 });
}
