import { Box, Text } from 'ink';
import { bar, changeText, type SyncProgress } from './sync-progress.js';

const count = (n: number): string => n.toLocaleString('en-US');

/** The live view of `lake sync start --follow` on a terminal: one line per table, redrawn as events arrive. */
export function SyncView({ progress, now, notices = [] }: { progress: SyncProgress; now: number; notices?: string[] }) {
  const width = Math.max(10, ...progress.tables.map((t) => t.lakeTable.length));
  return (
    <Box flexDirection="column">
      <Text bold>
        sync {progress.status} · {((now - progress.startedAt) / 1000).toFixed(1)} s
      </Text>
      {progress.tables.map((t) => (
        <Text key={t.table}>
          {t.lakeTable.padEnd(width)}{' '}
          <Text color={t.phase === 'failed' ? 'red' : t.phase === 'committed' ? 'green' : 'cyan'}>
            {bar(t.completed, t.total)}
          </Text>{' '}
          {count(t.completed)}/{t.total === null ? '?' : count(t.total)} · {count(t.rowsPerSecond)} rows/s · {t.phase} ·{' '}
          {((t.updatedAt - t.startedAt) / 1000).toFixed(1)} s{changeText(t.changes, t.deleted)}
        </Text>
      ))}
      {progress.error ? <Text color="red">{progress.error}</Text> : null}
      {notices.map((notice, i) => (
        <Text key={`notice-${i}`} color="yellow">
          {notice}
        </Text>
      ))}
    </Box>
  );
}
