import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LAKE_BIN = fileURLToPath(new URL('../../bin/lake.js', import.meta.url));

/** Rows of CSV as every listing prints it in a pipe (header first; quoted fields may hold commas, quotes, newlines). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
  timeoutMs?: number;
  /** The working directory (where a command writes files it names itself). */
  cwd?: string;
}

/**
 * The HOME every command of this test process runs with unless a test gives its own: never the user's, whose
 * profiles (`lake auth login`) and default lake would otherwise decide where the tests' commands go.
 */
let testHome: string | undefined;
/** The tests' own HOME (hermetic.ts), read before a test can change it: the commands' HOME is made inside it. */
const testsUserHome = process.env.HOME ?? tmpdir();
export function hermeticHome(): string {
  testHome ??= mkdtempSync(join(testsUserHome, 'lake-test-home-'));
  return testHome;
}

/**
 * Runs the built `lake` as a user would, in a pipe (not a terminal), with a clean environment: PATH, TMPDIR and
 * LANG only (no LAKE_* or XDG_* of the user's), a HOME of the tests' own, then what the test gives. A test that
 * wants no HOME at all passes `HOME: undefined` with `unsetHome`.
 */
export function runLake(
  args: readonly string[],
  options: CliOptions & { unsetHome?: boolean } = {},
): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'TMPDIR', 'LANG']) if (process.env[key]) env[key] = process.env[key] as string;
  if (!options.unsetHome) env.HOME = hermeticHome();
  for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LAKE_BIN, ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
