// Start-up of the SQL shell: the time from launch until its prompt is on the screen, as a ratio to `lake --help`
// measured in the same run (not a timed test). Issue 18's target: within 2x. Usage: node bench/shell-startup.mjs [runs]
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const runs = Number(process.argv[2] ?? 11);
const lake = new URL('../bin/lake.js', import.meta.url).pathname;
const home = join(mkdtempSync(join(tmpdir(), 'lake-bench-shell-')), 'home');
const env = {
  PATH: process.env.PATH,
  HOME: mkdtempSync(join(tmpdir(), 'lake-bench-user-')),
  TERM: 'xterm',
  NO_COLOR: '1',
};

/** Milliseconds from spawning `lake args` on a pseudo-terminal until `until` shows (then it is closed). */
function timeOnTerminal(args, until) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      'script',
      ['-qec', `stty cols 100 rows 40; exec ${process.execPath} ${lake} ${args.join(' ')}`, '/dev/null'],
      { env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    let done = false;
    child.stdout.on('data', (d) => {
      out += d;
      if (!done && until.test(out)) {
        done = true;
        resolve(performance.now() - started);
        child.stdin.write('\x04');
      }
    });
    child.on('close', () => (done ? undefined : reject(new Error(`no match for ${until}: ${out.slice(-300)}`))));
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
// The first start creates the home; measured runs open it, as every later start does.
await timeOnTerminal(['--home', home, 'sql'], /lake> /);
const help = [];
const shell = [];
for (let i = 0; i < runs; i++) {
  help.push(await timeOnTerminal(['--help'], /Examples:/));
  shell.push(await timeOnTerminal(['--home', home, 'sql'], /lake> /));
}
const ratio = median(shell) / median(help);
console.log(
  `shell start-up (prompt shown), median of ${runs}: lake sql ${median(shell).toFixed(0)} ms, lake --help ${median(help).toFixed(0)} ms, ratio ${ratio.toFixed(2)} (target <= 2)`,
);
