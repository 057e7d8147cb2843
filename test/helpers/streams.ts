import { PassThrough } from 'node:stream';
import { IOStreams, type OutputStream } from '../../src/render/iostreams.js';

export class Capture implements OutputStream {
  text = '';
  constructor(readonly isTTY: boolean) {}
  write(chunk: string | Uint8Array): boolean {
    this.text += chunk.toString();
    return true;
  }
}

/** IOStreams over captured output, as a terminal or as a pipe. */
export function captureStreams(
  tty: boolean,
  env: Record<string, string | undefined> = {},
): { io: IOStreams; out: Capture; err: Capture } {
  const out = new Capture(tty);
  const err = new Capture(tty);
  return { io: new IOStreams(out, err, new PassThrough(), env), out, err };
}
