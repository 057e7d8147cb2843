import type { Hono } from 'hono';
import { checkIdempotencyKey } from '../../idempotency/idempotency.js';
import type { SendDeletionObject } from '../../../contract/types.js';
import type { ApiEnv } from '../env.js';
import { SEND_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { sendObject, sendRunObject } from '../wire/sends.js';

const { listSends, createSend, getSend, updateSend, deleteSend, runSend, listSendRuns, getSendRun } = SEND_ROUTES;

export function sendRoutes(app: Hono<ApiEnv>): void {
  mount(app, listSends, async (c, { query }) => {
    const result = await c.get('services').sends.list(c.get('principal'), query.limit ?? 20, query.starting_after);
    return c.json(listBody({ data: result.data.map(sendObject), hasMore: result.hasMore }));
  });

  mount(app, createSend, async (c, { body }) => {
    const { send, generatedSecret } = await c.get('services').sends.create(c.get('principal'), body);
    c.header('Location', `/sends/${send.send.id}`);
    // A signing secret the service made is shown here once; it cannot be read back later.
    return c.json({ ...sendObject(send), ...(generatedSecret ? { signing_secret: generatedSecret } : {}) }, 201);
  });

  mount(app, getSend, async (c, { params }) =>
    c.json(sendObject(await c.get('services').sends.get(c.get('principal'), params.id))),
  );

  mount(app, updateSend, async (c, { params, body }) =>
    c.json(sendObject(await c.get('services').sends.update(c.get('principal'), params.id, body))),
  );

  mount(app, deleteSend, async (c, { params: { id } }) => {
    await c.get('services').sends.delete(c.get('principal'), id);
    return c.json({ object: 'send_deletion', id, deleted: true } satisfies SendDeletionObject);
  });

  mount(app, runSend, async (c, { params }) => {
    const key = checkIdempotencyKey(c.req.header('Idempotency-Key'));
    const { run, replayed } = await c.get('services').sends.trigger(c.get('principal'), params.id, key);
    c.header('Location', `/jobs/${run.run.id}`);
    if (replayed) c.header('Idempotent-Replayed', 'true');
    return c.json(sendRunObject(run), 202);
  });

  mount(app, listSendRuns, async (c, { params, query }) => {
    const result = await c
      .get('services')
      .sends.runs(c.get('principal'), params.id, query.limit ?? 20, query.starting_after);
    return c.json(listBody({ data: result.data.map(sendRunObject), hasMore: result.hasMore }));
  });

  mount(app, getSendRun, async (c, { params }) =>
    c.json(sendRunObject(await c.get('services').sends.getRun(c.get('principal'), params.id, params.run))),
  );
}
