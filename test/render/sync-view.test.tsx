import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { applyEvent, initialProgress, plainLine, type SyncProgress } from '../../src/render/sync-progress.js';
import { SyncView } from '../../src/render/sync-view.js';

const progress = (events: [string, Record<string, unknown>, number][]): SyncProgress =>
  events.reduce((state, [event, data, at]) => applyEvent(state, { event, data }, at), initialProgress(0));

describe('sync progress', () => {
  const events: [string, Record<string, unknown>, number][] = [
    ['job.running', { status: 'running' }, 100],
    [
      'sync.progress',
      { table: 'public.orders', lake_table: 'lake.shop.orders', phase: 'extracting', completed: 0, total: 1000 },
      1000,
    ],
    [
      'sync.progress',
      { table: 'public.orders', lake_table: 'lake.shop.orders', phase: 'extracting', completed: 500, total: 1000 },
      2000,
    ],
    [
      'sync.progress',
      { table: 'public.customers', lake_table: 'lake.shop.customers', phase: 'committed', completed: 40, total: 40 },
      2000,
    ],
  ];

  it('folds stream events into one line per table with rows per second', () => {
    const state = progress(events);
    expect(state.status).toBe('running');
    expect(state.tables.map((t) => [t.lakeTable, t.phase, t.completed, t.total, t.rowsPerSecond])).toEqual([
      ['lake.shop.orders', 'extracting', 500, 1000, 500],
      ['lake.shop.customers', 'committed', 40, 40, 40000],
    ]);
    expect(applyEvent(state, { event: 'sync.unknown_future_event', data: {} }, 3000)).toBe(state);
    expect(
      applyEvent(state, { event: 'job.failed', data: { status: 'failed', error: { message: 'boom' } } }, 3000),
    ).toMatchObject({ status: 'failed', error: 'boom' });
  });

  it('the Ink view draws a bar, counts, rate, phase and time for every table', () => {
    const { lastFrame, rerender } = render(<SyncView progress={progress(events)} now={3000} />);
    const frame = lastFrame() ?? '';
    expect(frame).toContain('sync running · 3.0 s');
    expect(frame).toMatch(/lake\.shop\.orders\s+██████████░░░░░░░░░░ 500\/1,000 · 500 rows\/s · extracting · 1\.0 s/);
    expect(frame).toMatch(/lake\.shop\.customers\s+████████████████████ 40\/40 · 40,000 rows\/s · committed/);
    rerender(
      <SyncView
        progress={applyEvent(
          progress(events),
          { event: 'job.failed', data: { status: 'failed', error: { message: 'table public.orders failed' } } },
          4000,
        )}
        now={4000}
      />,
    );
    expect(lastFrame()).toContain('sync failed');
    expect(lastFrame()).toContain('table public.orders failed');
  });

  it('piped lines are plain and stable', () => {
    const at = new Date('2026-01-02T03:04:05Z');
    expect(events.map(([event, data]) => plainLine({ event, data }, at))).toEqual([
      '03:04:05 sync running',
      '03:04:05 public.orders extracting 0/1,000',
      '03:04:05 public.orders extracting 500/1,000',
      '03:04:05 public.customers committed 40/40',
    ]);
  });
});
