import type { Problem } from '../../contract/validate.js';

/**
 * The first place a request's input holds a NUL character (U+0000), as a problem naming it; undefined when none.
 * No name, id, filter or setting lake keeps can hold one: PostgreSQL's text refuses it (the request failed there with
 * a 500 while SQLite took it), and none of the systems lake connects to takes one in a host, a user or a password.
 * Keys of objects are looked at too. `at` is where `value` is in the request (`name`, `tables[0].name`).
 */
export function nulProblem(value: unknown, at: string): Problem | undefined {
  if (typeof value === 'string') {
    const nul = value.indexOf('\u0000');
    return nul < 0
      ? undefined
      : {
          kind: 'invalid',
          param: at,
          message: `${at} holds a NUL character (at position ${nul + 1}), which no value here can contain.`,
        };
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = nulProblem(item, `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const here = at === '' ? key : `${at}.${key}`;
    const found = nulProblem(key, here) ?? nulProblem(item, here);
    if (found) return found;
  }
  return undefined;
}
