import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { LAKE_BIN } from './cli.js';
import { tempDir } from './temp.js';

/**
 * A full disk for one `lake` command: a small tmpfs mounted over a folder of its home, in a mount namespace of the
 * command's own, so nothing of it reaches the machine (as root, CI here; or as a user allowed user namespaces).
 */
const NAMESPACE = ['--mount', '--propagation', 'private', ...(process.getuid?.() === 0 ? [] : ['--map-root-user'])];

/** Whether this machine lets a test mount a tmpfs in a namespace of its own. */
export const canMountSmallDisk =
  spawnSync('unshare', [...NAMESPACE, 'mount', '-t', 'tmpfs', 'tmpfs', tempDir('lake-probe')]).status === 0;

/**
 * Runs `lake <args>` with `folder` on a tmpfs that holds what the folder held and `roomKb` more (0: none at all); with `times`, again
 * until it fails, at most that often, its output then the last run's.
 * Its stderr ends with a line `kept=<KB before> used=<KB after> runs=<runs>` of the folder, read before the
 * namespace (and its tmpfs) goes.
 */
export function lakeOnSmallDisk(
  folder: string,
  roomKb: number,
  args: readonly string[],
  env: Record<string, string>,
  times = 1,
): SpawnSyncReturns<string> {
  mkdirSync(folder, { recursive: true });
  const script = [
    'set -e',
    'dir="$1"; room="$2"; times="$3"; shift 3',
    'keep=$(mktemp -d); cp -a "$dir/." "$keep/"',
    'mount -t tmpfs -o size=$(( $(du -sk "$keep" | cut -f1) + room ))k tmpfs "$dir"',
    'cp -a "$keep/." "$dir/"',
    // No room at all: the tmpfs is filled to its last byte (its size is only rounded to pages otherwise).
    'if [ "$room" -eq 0 ]; then cat /dev/zero > "$dir/.filler" 2>/dev/null || true; fi',
    'runs=0',
    'while [ "$runs" -lt "$times" ]; do',
    '  runs=$((runs + 1))',
    '  "$@" > "$keep.out" 2> "$keep.err" || break',
    'done',
    'cat "$keep.out"; cat "$keep.err" >&2',
    'echo "kept=$(du -sk "$keep" | cut -f1) used=$(du -sk "$dir" | cut -f1) runs=$runs" >&2',
    'rm -rf "$keep" "$keep.out" "$keep.err"',
  ].join('\n');
  return spawnSync(
    'unshare',
    [
      ...NAMESPACE,
      'sh',
      '-c',
      script,
      'sh',
      folder,
      String(roomKb),
      String(times),
      process.execPath,
      LAKE_BIN,
      ...args,
    ],
    { encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '', ...env } },
  );
}

/** The folder's size before and after the command, from lakeOnSmallDisk's last line. */
export function folderSizes(stderr: string): { kept: number; used: number } {
  return { kept: Number(/kept=(\d+)/.exec(stderr)?.[1]), used: Number(/used=(\d+)/.exec(stderr)?.[1]) };
}
