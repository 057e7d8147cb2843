/** The API's routes: Jobs and their event streams. */
import { Job, JobCancellation, JobResult, StreamUrl } from './jobs.js';
import { ResultFileFormat } from './queries.js';
import { defineRoute } from './route.js';
import { List, OneOf, pageQuery, Type } from './schema.js';
import { id, cursorErrors, json, events } from './route-helpers.js';

export const JOB_ROUTES = {
  listJobs: defineRoute({
    operationId: 'listJobs',
    method: 'get',
    path: '/jobs',
    tag: 'Jobs',
    summary: 'List jobs, newest first',
    auth: { scopes: ['jobs:read'] },
    query: Type.Object({
      ...pageQuery(20, 100),
      status: Type.Optional(
        OneOf(['queued', 'running', 'succeeded', 'failed', 'cancelled'], { description: 'Only jobs in this status.' }),
      ),
      kind: Type.Optional(OneOf(['query', 'sync', 'send'], { description: 'Only jobs of this kind.' })),
      since: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 999_999_999_999,
          description: 'Only jobs created at or after this time, epoch seconds.',
        }),
      ),
    }),
    paramErrors: cursorErrors,
    responses: { 200: json('A page of jobs.', List(Job)) },
    errors: ['invalid_cursor'],
  }),
  getJob: defineRoute({
    operationId: 'getJob',
    method: 'get',
    path: '/jobs/{id}',
    tag: 'Jobs',
    summary: 'Get a job',
    auth: { scopes: ['jobs:read'] },
    params: id('A job id (qr_, sync_ or snr_…).'),
    responses: { 200: json('The job.', Job) },
    errors: ['job_not_found'],
  }),
  getJobResult: defineRoute({
    operationId: 'getJobResult',
    method: 'get',
    path: '/jobs/{id}/result',
    tag: 'Jobs',
    summary: "Get a query job's result files",
    auth: { scopes: ['jobs:read'] },
    params: id('A query job id.'),
    query: Type.Object({ file_format: Type.Optional(ResultFileFormat) }),
    responses: { 200: json('Signed result URLs.', JobResult) },
    errors: ['job_not_found', 'job_not_finished', 'job_has_no_result', 'result_storage_full', 'service_unavailable'],
  }),
  cancelJob: defineRoute({
    operationId: 'cancelJob',
    method: 'post',
    path: '/jobs/{id}/cancel',
    tag: 'Jobs',
    summary: 'Cancel a queued or running job',
    auth: { scopes: ['jobs:manage'] },
    params: id('A job id.'),
    responses: { 200: json('The job as the cancel left it.', JobCancellation) },
    errors: ['job_not_found', 'job_not_cancellable'],
  }),
  streamJobEvents: defineRoute({
    operationId: 'streamJobEvents',
    method: 'get',
    path: '/jobs/{id}/events',
    tag: 'Jobs',
    summary: "Follow a job's events (SSE)",
    auth: { scopes: ['jobs:read'], streamToken: true },
    params: id('A job id.'),
    requestHeaders: ['Last-Event-ID'],
    responses: { 200: events, 204: { description: 'The job has ended and no event is left after Last-Event-ID.' } },
    errors: ['job_not_found', 'invalid_last_event_id', 'too_many_streams'],
  }),
  createJobStreamUrl: defineRoute({
    operationId: 'createJobStreamUrl',
    method: 'post',
    path: '/jobs/{id}/stream_url',
    tag: 'Jobs',
    summary: "A 5-minute URL for the job's events, for EventSource",
    auth: { scopes: ['jobs:read'] },
    params: id('A job id.'),
    responses: { 200: json('The stream URL.', StreamUrl) },
    errors: ['job_not_found'],
  }),
};
