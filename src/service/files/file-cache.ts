import { rmSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { filesUnder } from './files-under.js';

interface Entry {
  size: number;
  lastUsed: number;
  holds: number;
}

/**
 * The local copies of stored files and their bytes, bounded: least recently used first out, never a file held by
 * a running read. A process keeps its own account; what another process (on the same cache folder) holds, it does
 * not know, so each replica should have a cache folder of its own (docs/operations.md).
 */
export class FileCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private clock = 0;
  private scanned = false;

  constructor(
    readonly maxBytes: number,
    private readonly root: string,
    /** Which files under the root are copies of stored files (never the catalogs or staging beside them). */
    private readonly isCopy: (relativePath: string) => boolean,
  ) {}

  /**
   * Copies an earlier process left, accounted the first time the cache's size matters (not at every start: a CLI
   * command that fits in the cache never walks it). They are older than anything this process used, oldest first.
   */
  private scan(): void {
    if (this.scanned) return;
    this.scanned = true;
    // Dot files are downloads or writes in progress, never copies.
    const found = filesUnder(this.root, this.root)
      .filter((file) => !basename(file.path).startsWith('.') && this.isCopy(file.path.split(sep).join('/')))
      .map((file) => ({ ...file, path: join(this.root, file.path) }))
      .filter((file) => !this.entries.has(file.path))
      .sort((a, b) => a.modifiedMs - b.modifiedMs);
    found.forEach((file, i) => {
      this.entries.set(file.path, { size: file.size, lastUsed: i - found.length, holds: 0 });
      this.bytes += file.size;
    });
  }

  get usedBytes(): number {
    this.scan();
    return this.bytes;
  }

  has(path: string): boolean {
    return this.entries.has(path);
  }

  /** A file now on disk (fetched, or written here and published). */
  add(path: string, size: number): void {
    const known = this.entries.get(path);
    if (known) this.bytes -= known.size;
    this.entries.set(path, { size, lastUsed: ++this.clock, holds: known?.holds ?? 0 });
    this.bytes += size;
  }

  /** Holds a file (it is used now, and stays until released). */
  hold(path: string): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    entry.holds++;
    entry.lastUsed = ++this.clock;
  }

  release(path: string): void {
    const entry = this.entries.get(path);
    if (entry && entry.holds > 0) entry.holds--;
  }

  /** Forgets a file removed from the lake (its copy is removed by the caller). */
  drop(path: string): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    this.bytes -= entry.size;
    this.entries.delete(path);
  }

  /** Removes the least recently used copies nobody holds until the cache fits; returns the bytes freed. */
  evict(): number {
    this.scan();
    if (this.bytes <= this.maxBytes) return 0;
    let freed = 0;
    const candidates = [...this.entries.entries()]
      .filter(([, entry]) => entry.holds === 0)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [path, entry] of candidates) {
      if (this.bytes <= this.maxBytes) break;
      rmSync(path, { force: true });
      this.entries.delete(path);
      this.bytes -= entry.size;
      freed += entry.size;
    }
    return freed;
  }
}
