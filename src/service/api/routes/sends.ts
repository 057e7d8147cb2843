import type { Hono } from 'hono';
import type { SendDeletionObject } from '../../../contract/types.js';
import type { Principal } from '../../auth/principal.js';
import { LakeServiceError } from '../../core/errors.js';
import type { SendRecord } from '../../sends/send-store.js';
import type { LakeServices } from '../../assembly/services.js';
import type { ApiEnv } from '../env.js';
import { SEND_ROUTES } from '../../../contract/routes.js';
import type { SendObject } from '../../../contract/types.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { sendObject, sendRunObject } from '../wire/sends.js';

const { listSends, createSend, getSend, updateSend, deleteSend, runSend, listSendRuns, getSendRun } = SEND_ROUTES;

export function sendRoutes(app: Hono<ApiEnv>): void {
  const render = async (c: { get(key: 'services'): LakeServices }, send: SendRecord): Promise<SendObject> => {
    const { sends, jobs } = c.get('services');
    const last = (await sends.store.runs(send.id, 1)).data[0];
    return sendObject(send, last ? sendRunObject(last, await jobs.store.getById(last.id)) : null);
  };

  /** A send the caller may see: a restricted credential sees none whose SQL names a table it may not read (404). */
  const visibleSend = async (
    c: { get(key: 'services'): LakeServices; get(key: 'principal'): Principal },
    id: string,
  ): Promise<SendRecord> => {
    const { sends, visibility } = c.get('services');
    const send = await sends.get(c.get('principal'), id);
    if (!(await visibility.sendVisible(c.get('principal'), send)))
      throw new LakeServiceError('send_not_found', `There is no send ${id.slice(0, 64)} in your organization.`);
    return send;
  };

  mount(app, listSends, async (c, { query }) => {
    const { sends, visibility } = c.get('services');
    const result = await sends.list(c.get('principal'), query.limit ?? 20, query.starting_after);
    const shown = await Promise.all(result.data.map((s) => visibility.sendVisible(c.get('principal'), s)));
    return c.json(
      listBody({
        data: await Promise.all(result.data.filter((_, i) => shown[i]).map((s) => render(c, s))),
        hasMore: result.hasMore,
      }),
    );
  });

  mount(app, createSend, async (c, { body }) => {
    const { send, generatedSecret } = await c.get('services').sends.create(c.get('principal'), body);
    c.header('Location', `/sends/${send.id}`);
    // A signing secret the service made is shown here once; it cannot be read back later.
    return c.json({ ...(await render(c, send)), ...(generatedSecret ? { signing_secret: generatedSecret } : {}) }, 201);
  });

  mount(app, getSend, async (c, { params }) => c.json(await render(c, await visibleSend(c, params.id))));

  mount(app, updateSend, async (c, { params, body }) => {
    const send = await c.get('services').sends.update(c.get('principal'), params.id, body);
    return c.json(await render(c, send));
  });

  mount(app, deleteSend, async (c, { params: { id } }) => {
    await c.get('services').sends.delete(c.get('principal'), id);
    return c.json({ object: 'send_deletion', id, deleted: true } satisfies SendDeletionObject);
  });

  mount(app, runSend, async (c, { params }) => {
    const { sends, jobs } = c.get('services');
    const run = await sends.trigger(c.get('principal'), params.id);
    c.header('Location', `/jobs/${run.id}`);
    return c.json(sendRunObject(run, await jobs.store.getById(run.id)), 202);
  });

  mount(app, listSendRuns, async (c, { params, query }) => {
    const { sends, jobs } = c.get('services');
    await visibleSend(c, params.id);
    const result = await sends.runs(c.get('principal'), params.id, query.limit ?? 20, query.starting_after);
    return c.json(
      listBody({
        data: await Promise.all(result.data.map(async (r) => sendRunObject(r, await jobs.store.getById(r.id)))),
        hasMore: result.hasMore,
      }),
    );
  });

  mount(app, getSendRun, async (c, { params }) => {
    const { sends, jobs } = c.get('services');
    await visibleSend(c, params.id);
    const run = await sends.getRun(c.get('principal'), params.id, params.run);
    return c.json(sendRunObject(run, await jobs.store.getById(run.id)));
  });
}
