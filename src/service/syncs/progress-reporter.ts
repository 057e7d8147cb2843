import type { JobStore } from '../jobs/job-store.js';
import type { SyncStore, TableProgress } from './sync-store.js';
import type { SyncReporter, TablePhase, TableTask } from './types.js';

/** Row counts are announced at most this often per table while they climb. */
const PROGRESS_EVERY_MS = 500;

/** The most column changes a schema change's message names; the rest are counted (a table may have thousands). */
const CHANGES_NAMED = 20;

/** `+added -dropped ~retyped`, the first CHANGES_NAMED of them, then how many more. */
function columnChanges(change: { added: string[]; dropped: string[]; retyped: string[] }): string {
  const all = [
    ...change.added.map((c) => `+${c}`),
    ...change.dropped.map((c) => `-${c}`),
    ...change.retyped.map((c) => `~${c}`),
  ];
  const named = all.slice(0, CHANGES_NAMED).join(' ');
  return all.length > CHANGES_NAMED ? `${named} and ${all.length - CHANGES_NAMED} more columns` : named;
}

/** Turns progress into durable sync state and `sync.progress` events: every phase change, row counts twice a second. */
export async function progressReporter(
  store: SyncStore,
  jobs: JobStore,
  id: string,
  tasks: readonly TableTask[],
): Promise<SyncReporter & { flushed(): Promise<void> }> {
  const progress: Record<string, TableProgress> = {};
  const lastSent = new Map<string, number>();
  for (const task of tasks) {
    progress[task.key] = {
      table: task.key,
      lake_table: `lake.${task.lakeSchema}.${task.lakeTable}`,
      phase: 'queued',
      completed: 0,
      total: task.table.estimatedRows,
    };
  }
  await store.saveProgress(id, progress);
  // The extractors report as they go, without waiting for the store: writes are queued in the order reported,
  // each with the state of its moment, and the sync waits for the queue before its final event.
  let written: Promise<void> = Promise.resolve();
  const write = (step: () => Promise<void>): void => {
    // A progress write that fails (the store restarting) is superseded by the next one and by the final state.
    written = written.then(step).catch(() => undefined);
  };
  const emit = (task: TableTask): void => {
    const entry = { ...(progress[task.key] as TableProgress) };
    const state = structuredClone(progress);
    lastSent.set(task.key, Date.now());
    write(async () => {
      await store.saveProgress(id, state);
      await jobs.appendEvent(id, 'sync.progress', entry);
    });
  };
  return {
    phase(task: TableTask, phase: TablePhase, details = {}) {
      const entry = progress[task.key] as TableProgress;
      entry.phase = phase;
      if (details.completed !== undefined) entry.completed = details.completed;
      if (details.total !== undefined) entry.total = details.total;
      if (details.error !== undefined) entry.error = details.error;
      if (details.deleted !== undefined) entry.deleted = details.deleted;
      if (details.changes !== undefined) entry.changes = details.changes;
      emit(task);
    },
    rows(task: TableTask, completed: number) {
      (progress[task.key] as TableProgress).completed = completed;
      if (Date.now() - (lastSent.get(task.key) ?? 0) >= PROGRESS_EVERY_MS) emit(task);
    },
    schemaChange(task: TableTask, change) {
      write(async () => {
        const job = await jobs.getById(id);
        if (job)
          await store.log(
            job.organizationId,
            (await store.get(id))?.sourceId ?? '',
            'schema_change',
            task.key,
            `Table ${task.key} changed: ${columnChanges(change)}; it was refreshed in full.`,
            change,
          );
        await jobs.appendEvent(id, 'sync.schema_change', { table: task.key, ...change });
      });
    },
    flushed: () => written,
  };
}
