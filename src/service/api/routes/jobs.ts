import type { Hono } from 'hono';
import type { JobRecord } from '../../jobs/job-store.js';
import type { Principal } from '../../auth/principal.js';
import type { LakeServices } from '../../services.js';
import type { ApiEnv } from '../env.js';
import { authenticate } from '../middleware/authenticate.js';
import { listBody, readPageRequest } from '../pagination.js';
import { publicOrigin } from '../request-params.js';
import { jobEventsRoute, streamUrlBody } from './job-events.js';

/** The job object: what ran, how it went, and where its work and events are. */
export function jobObject(job: JobRecord, error = job.errorCode === null ? null : { code: job.errorCode, message: job.errorMessage }): Record<string, unknown> & { id: string } {
  return {
    object: 'job',
    id: job.id,
    kind: job.kind,
    status: job.status,
    created: job.created,
    started: job.started,
    finished: job.finished,
    error,
    cancel_requested: job.cancelRequested,
    resource: job.kind === 'query' ? `/queries/${job.id}` : null,
  };
}

/** The job object as the caller may see it: a restricted credential is not told which tables a sync failed on. */
function seenJob(c: { get(key: 'services'): LakeServices; get(key: 'principal'): Principal }, job: JobRecord): Record<string, unknown> & { id: string } {
  return jobObject(job, c.get('services').visibility.jobError(c.get('principal'), job.errorCode === null ? null : { code: job.errorCode, message: job.errorMessage }));
}

export function jobRoutes(app: Hono<ApiEnv>): void {
  const read = authenticate({ anyScope: ['jobs:read'] });

  app.get('/jobs', read, (c) => {
    const page = readPageRequest(c, { limit: 20, max: 100 });
    const principal = c.get('principal');
    const result = c.get('services').jobs.list(principal, page.limit, page.startingAfter);
    return c.json(listBody({ data: result.data.map((job) => seenJob(c, job)), hasMore: result.hasMore }));
  });

  app.get('/jobs/:id', read, (c) => c.json(seenJob(c, c.get('services').jobs.get(c.get('principal'), c.req.param('id')))));

  app.get('/jobs/:id/result', read, (c) => {
    const { jobs, results } = c.get('services');
    const query = jobs.result(c.get('principal'), c.req.param('id'));
    const signed = results.downloadLink(query.id);
    return c.json({
      object: 'job_result',
      job: query.id,
      row_count: query.rowCount,
      files: results.file(query) ? [{ url: `${publicOrigin(c)}${signed.path}`, bytes: query.resultBytes, expires: signed.expires }] : [],
    });
  });

  app.post('/jobs/:id/cancel', authenticate({ anyScope: ['jobs:manage'] }), async (c) => {
    const outcome = await c.get('services').jobs.cancel(c.get('principal'), c.req.param('id'));
    return c.json({
      object: 'job_cancellation',
      job: seenJob(c, outcome.job),
      execution_may_continue: outcome.executionMayContinue,
    });
  });

  jobEventsRoute(app, authenticate({ anyScope: ['jobs:read'], allowStreamToken: true }));
  app.post('/jobs/:id/stream_url', read, (c) => {
    const job = c.get('services').jobs.get(c.get('principal'), c.req.param('id'));
    return c.json(streamUrlBody(c, `/jobs/${job.id}/events`));
  });
}
