import type { Problem } from '../../contract/validate.js';

/**
 * The first place a request's input holds text lake cannot keep as sent, as a problem naming it; undefined when
 * none. A NUL character (U+0000): no name, id, filter or setting lake keeps can hold one (PostgreSQL's text refuses
 * it, and a request with one failed there with a 500 while SQLite took it), and none of the systems lake connects to
 * takes one in a host, a user or a password. A lone surrogate (a JSON `\\uD800` escape with no pair): it is no
 * character, and each store kept it as replacement characters (one on PostgreSQL, three on SQLite), so a name or
 * SQL came back other than sent. Keys of objects are looked at too. `at` is where `value` is in the request
 * (`name`, `tables[0].name`). The walk keeps its own stack, not the call stack: a body may nest as deep as its
 * megabyte allows.
 */
export function textProblem(value: unknown, at: string): Problem | undefined {
  const pending: { value: unknown; at: string }[] = [{ value, at }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const here = next.at;
    if (typeof next.value === 'string') {
      const found = nulIn(next.value, here) ?? loneSurrogateIn(next.value, here);
      if (found) return found;
    } else if (Array.isArray(next.value)) {
      // Pushed last to first, so the first place in the request is the one found.
      for (let i = next.value.length - 1; i >= 0; i--) pending.push({ value: next.value[i], at: `${here}[${i}]` });
    } else if (next.value !== null && typeof next.value === 'object') {
      const entries = Object.entries(next.value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i] as [string, unknown];
        const path = here === '' ? key : `${here}.${key}`;
        pending.push({ value: item, at: path }, { value: key, at: path });
      }
    }
  }
  return undefined;
}

function nulIn(text: string, at: string): Problem | undefined {
  const nul = text.indexOf('\u0000');
  if (nul < 0) return undefined;
  return {
    kind: 'invalid',
    param: at,
    message: `${at} holds a NUL character (at position ${nul + 1}), which no value here can contain.`,
  };
}

/** A high surrogate not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function loneSurrogateIn(text: string, at: string): Problem | undefined {
  const found = LONE_SURROGATE.exec(text);
  if (!found) return undefined;
  const code = (found[0].codePointAt(0) as number).toString(16).toUpperCase();
  return {
    kind: 'invalid',
    param: at,
    message: `${at} holds a lone surrogate \\u${code} (at position ${found.index + 1}): half of a character, with no other half, which no text can keep. Send the character whole (both halves of its pair), or as UTF-8.`,
  };
}
