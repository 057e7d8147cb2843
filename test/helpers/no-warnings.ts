import { afterAll, expect } from 'vitest';

/**
 * Runs before every test file: a warning the process prints (a deprecated driver property read, a listener leak) is
 * a line in `lake serve`'s log that nobody asked for, so a test file that makes one fails, naming it.
 */
const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));
afterAll(() => {
  expect(warnings, 'warnings the process printed').toEqual([]);
});
