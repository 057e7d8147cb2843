import { CANVAS_ROUTES, SEND_ROUTES, SOURCE_ROUTES } from '../contract/routes.js';
import type { CommandContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { fetchAll } from './listing.js';

/** Resources that have names as well as ids: where to list them, and how their ids look. */
const KINDS = {
  source: { route: SOURCE_ROUTES.listSources, prefix: 'src_', list: 'lake sources ls' },
  send: { route: SEND_ROUTES.listSends, prefix: 'snd_', list: 'lake sends ls' },
  canvas: { route: CANVAS_ROUTES.listCanvases, prefix: 'cnv_', list: 'lake canvas ls' },
} as const;

export type NamedKind = keyof typeof KINDS;

/** Names compare as lake compares source names: Unicode compatibility form, no accents, case or blanks. */
export const foldName = (name: string): string =>
  name
    .normalize('NFKC')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** Edits between two short strings, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] as number;
}

/**
 * The id a command argument stands for: an id as it is, or the name of a source, send or canvas. A name that
 * matches several is a usage error that lists them; one that matches none says which names are close.
 */
export async function resolveId(ctx: CommandContext, kind: NamedKind, ref: string): Promise<string> {
  const spec = KINDS[kind];
  if (ref.startsWith(spec.prefix) && /^[a-z]+_[0-9a-z]+$/.test(ref)) return ref;
  const all: { id: string; name: string }[] = await fetchAll(await ctx.client(), spec.route);
  const exact = all.filter((r) => r.name === ref);
  const matches = exact.length > 0 ? exact : all.filter((r) => foldName(r.name) === foldName(ref));
  if (matches.length === 1) return (matches[0] as { id: string }).id;
  if (matches.length > 1) {
    throw new CliError(
      'ambiguous_name',
      `${matches.length} ${kind}s are named '${ref}': ${matches.map((m) => `${m.id} ('${m.name}')`).join(', ')}.`,
      EXIT.usage,
      'Give the id instead.',
    );
  }
  const folded = foldName(ref);
  const close = all
    .map((r) => ({ r, d: distance(foldName(r.name), folded) }))
    .filter(({ r, d }) => d <= Math.max(2, Math.floor(folded.length / 3)) || foldName(r.name).includes(folded))
    .sort((x, y) => x.d - y.d)
    .slice(0, 3)
    .map(({ r }) => `'${r.name}' (${r.id})`);
  throw new CliError(
    `${kind}_not_found`,
    `No ${kind} is named '${ref}' and it is not a ${kind} id (${spec.prefix}…).`,
    EXIT.failed,
    close.length > 0 ? `Did you mean ${close.join(' or ')}?` : `List them with \`${spec.list}\`.`,
  );
}
