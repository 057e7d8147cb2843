import { EXIT } from './exit-codes.js';

/**
 * The first ^C calls onFirst (to cancel work on the server, say) and lets the command finish its own way; the
 * second exits 130 at once. Returns the function that removes the handler again.
 */
export function onInterrupt(onFirst: () => void): () => void {
  let count = 0;
  const handler = (): void => {
    count++;
    if (count === 1) onFirst();
    else process.exit(EXIT.interrupted);
  };
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}
