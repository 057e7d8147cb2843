import type { OutputStream } from './iostreams.js';

/**
 * Lines for stderr that must not be drawn over. While a live view owns the terminal it redraws its lines in place,
 * erasing whatever was written among them (a ^C notice vanished that way); so while one is shown, notices are held,
 * shown inside the view, and written out for good once the view has ended.
 */
export class HeldNotices {
  private held: string[] | undefined;
  private changed: () => void = () => {};

  constructor(private readonly stderr: OutputStream) {}

  /** Writes the notice now, or holds it while a live view is shown. */
  write(text: string): void {
    if (!this.held) {
      this.stderr.write(text);
      return;
    }
    this.held.push(text);
    this.changed();
  }

  /** A live view starts: notices wait, and `changed` redraws the view to show them. */
  hold(changed: () => void): void {
    this.held ??= [];
    this.changed = changed;
  }

  /** The notices held so far, as lines for the view to show. */
  get shown(): string[] {
    return (this.held ?? []).map((text) => text.trim()).filter(Boolean);
  }

  /** The view has ended: what was held is written where it stays. */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    this.changed = () => {};
    for (const text of held) this.stderr.write(text);
  }
}
