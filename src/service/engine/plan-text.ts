const FILE_NAMES = 'Filename(s):';
const SHOWN_INSTEAD = '<lake files>';

/**
 * An EXPLAIN (ANALYZE) plan without the files it read: DuckDB's boxes list a scan's `Filename(s):`, absolute paths
 * on this server, wrapped over as many lines of the box as they need. Those lines are blanked within their box
 * (the first one says `<lake files>`), so the drawing keeps its shape; any whole path left elsewhere is replaced
 * by `<lake>` (`hidden`: the folders not to show, longest first).
 */
export function planWithoutPaths(text: string, hidden: readonly string[]): string {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    for (
      let at = (lines[i] as string).indexOf(FILE_NAMES);
      at >= 0;
      at = (lines[i] as string).indexOf(FILE_NAMES, at + 1)
    ) {
      const line = lines[i] as string;
      const left = line.lastIndexOf('│', at);
      const right = line.indexOf('│', at);
      if (left < 0 || right < 0) continue;
      const width = right - left - 1;
      for (let j = i + 1, first = true; j < lines.length; j++, first = false) {
        const next = lines[j] as string;
        if (next[left] !== '│' || next[right] !== '│' || next.slice(left + 1, right).trim() === '') break;
        const label = first ? SHOWN_INSTEAD.slice(0, width) : '';
        const before = Math.floor((width - label.length) / 2);
        lines[j] =
          `${next.slice(0, left + 1)}${' '.repeat(before)}${label}${' '.repeat(width - before - label.length)}${next.slice(right)}`;
      }
    }
  }
  return hidden.reduce((clean, dir) => clean.split(dir).join('<lake>'), lines.join('\n'));
}
