import { shown, type Problem } from '../../contract/validate.js';

/**
 * The first query parameter of a request that its route does not take, or that it names more than once, as a
 * problem; undefined when there is none. Ignored, a misspelt filter (`created_after` where the route takes `since`,
 * `state` for `status`) would answer every row as though it had applied, and of a parameter given twice only the
 * first would count: both are the caller's mistake, said as such (Stripe refuses unknown parameters the same way).
 * `takes` is every name the route reads, its schema's parameters and a stream token where it accepts one.
 */
export function queryNameProblem(url: string, route: string, takes: readonly string[]): Problem | undefined {
  const start = url.indexOf('?');
  if (start < 0) return undefined;
  const counts = new Map<string, number>();
  for (const name of new URLSearchParams(url.slice(start + 1)).keys()) counts.set(name, (counts.get(name) ?? 0) + 1);
  for (const [name, count] of counts) {
    const param = shown(name);
    if (!takes.includes(name)) {
      const known = takes.length ? `takes: ${takes.join(', ')}.` : 'takes no query parameters.';
      return { kind: 'unknown', param, message: `Unknown query parameter '${param}'. ${route} ${known}` };
    }
    if (count > 1) return { kind: 'invalid', param, message: `${param} is given ${count} times; give it once.` };
  }
  return undefined;
}
