import type { Hono } from 'hono';
import type { JobCancellationObject, JobResultObject } from '../../../contract/types.js';
import type { ApiEnv } from '../env.js';
import { JOB_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { jobObject } from '../wire/jobs.js';
import { publicOrigin } from '../request-params.js';
import { jobEventsRoute, streamUrlBody } from './job-events.js';

const { listJobs, getJob, getJobResult, cancelJob, streamJobEvents, createJobStreamUrl } = JOB_ROUTES;

export function jobRoutes(app: Hono<ApiEnv>): void {
  mount(app, listJobs, async (c, { query }) => {
    const result = await c.get('services').jobs.list(c.get('principal'), query.limit ?? 20, query.starting_after, {
      ...(query.status ? { status: query.status } : {}),
      ...(query.kind ? { kind: query.kind } : {}),
      ...(query.since !== undefined ? { since: query.since } : {}),
    });
    return c.json(listBody({ data: result.data.map((job) => jobObject(job)), hasMore: result.hasMore }));
  });

  mount(app, getJob, async (c, { params }) =>
    c.json(jobObject(await c.get('services').jobs.get(c.get('principal'), params.id))),
  );

  mount(app, getJobResult, async (c, { params, query: options }) => {
    const { queries, results } = c.get('services');
    const query = await queries.resultOfJob(c.get('principal'), params.id);
    const signed = results.downloadLink(query.id);
    const fileFormat = options.file_format ?? 'parquet';
    const file = results.file(query) && (await results.fileIn(query, fileFormat));
    const url = `${publicOrigin(c)}${signed.path}${fileFormat === 'parquet' ? '' : `&file_format=${fileFormat}`}`;
    return c.json({
      object: 'job_result',
      job: query.id,
      row_count: query.rowCount,
      files: file ? [{ url, bytes: file.size, expires: signed.expires }] : [],
    } satisfies JobResultObject);
  });

  mount(app, cancelJob, async (c, { params }) => {
    const outcome = await c.get('services').jobs.cancel(c.get('principal'), params.id);
    return c.json({
      object: 'job_cancellation',
      job: jobObject(outcome.job),
      execution_may_continue: outcome.executionMayContinue,
    } satisfies JobCancellationObject);
  });

  jobEventsRoute(app, streamJobEvents);
  mount(app, createJobStreamUrl, async (c, { params }) => {
    const job = await c.get('services').jobs.get(c.get('principal'), params.id);
    return c.json(streamUrlBody(c, `/jobs/${job.id}/events`));
  });
}
