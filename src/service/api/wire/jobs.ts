import type { JobObject } from '../../../contract/types.js';
import type { JobRecord } from '../../jobs/job-store.js';

type Failure = { code: string; message: string | null } | null;

/** The job object: what ran, how it went, and where its work and events are; `error` as the caller may see it. */
export function jobObject(
  job: JobRecord,
  error: Failure = job.errorCode === null ? null : { code: job.errorCode, message: job.errorMessage },
): JobObject {
  return {
    object: 'job',
    id: job.id,
    kind: job.kind,
    status: job.status,
    created: job.created,
    started: job.started,
    finished: job.finished,
    error: error && { code: error.code, message: error.message ?? '' },
    cancel_requested: job.cancelRequested,
    resource: job.kind === 'query' ? `/queries/${job.id}` : null,
    sql: job.kind === 'query' ? job.sql : null,
    ...(job.tags.length > 0 ? { tags: job.tags } : {}),
  };
}
