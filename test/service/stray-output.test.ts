import { describe, expect, it } from 'vitest';
import { routeStrayOutput } from '../../src/service/server/stray-output.js';

describe('what libraries print on their own, in lake serve', () => {
  it('becomes JSON log lines: cut to 1,000 characters, 30 a minute, the rest counted; never a stack', async () => {
    const lines: Record<string, unknown>[] = [];
    let now = 0;
    const restore = routeStrayOutput(
      (line) => lines.push(line as Record<string, unknown>),
      () => now,
    );
    try {
      console.error('Warning: got packets out of order. Expected %d but received %d', 2, 40);
      console.trace();
      console.log('x'.repeat(5_000));
      process.emitWarning('a listener leaks', 'MaxListenersExceededWarning');
      // emitWarning delivers on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 40; i++) console.warn(`flood ${i}`);
      now = 61_000;
      console.warn('a new minute');
    } finally {
      restore();
    }
    expect(lines[0]).toEqual({
      level: 'warn',
      msg: 'library output',
      source: 'console.error',
      text: 'Warning: got packets out of order. Expected 2 but received 40',
    });
    expect(lines[1]).toMatchObject({ source: 'console.trace', text: 'Trace: ' });
    expect(lines[2]?.text).toBe(`${'x'.repeat(1_000)}… (5000 characters)`);
    expect(lines[3]).toMatchObject({
      source: 'process warning',
      text: 'MaxListenersExceededWarning: a listener leaks',
    });
    // 4 lines above and 26 of the flood make 30; 14 were left out, and said so when the minute ended.
    expect(lines.filter((line) => String(line.text).startsWith('flood'))).toHaveLength(26);
    expect(lines.at(-2)).toEqual({
      level: 'warn',
      msg: 'library output left out',
      count: 14,
      reason: 'over 30 lines a minute',
    });
    expect(lines.at(-1)).toMatchObject({ text: 'a new minute' });
    for (const line of lines) expect(String(line.text ?? '')).not.toMatch(/\n\s+at /);
  });

  it('gives the console and Node’s warning printer back', () => {
    const log = console.log;
    const printers = process.listeners('warning');
    const restore = routeStrayOutput(() => {});
    expect(console.log).not.toBe(log);
    restore();
    expect(console.log).toBe(log);
    expect(process.listeners('warning')).toEqual(printers);
  });
});
