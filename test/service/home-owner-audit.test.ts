import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditStore, type AuditEvent } from '../../src/service/auth/audit-store.js';
import { openHome, type Home } from '../../src/service/home/home.js';
import { tempDir } from '../helpers/temp.js';

/** The organization's audit log, oldest first. */
async function events(home: Home): Promise<AuditEvent[]> {
  const { data } = await new AuditStore(home.db).page(home.organization.id, {}, 200, undefined);
  return [...data].reverse();
}

describe("a home's own owner token in the audit log", () => {
  it('is recorded when the home makes it, and when it replaces it, never with its secret', async () => {
    const root = join(tempDir('lake-owner-audit'), 'home');
    const first = await openHome(root);
    const made = await events(first);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      action: 'pat.created',
      organizationId: first.organization.id,
      actor: { kind: 'local_admin', credentialId: null, requestId: null },
      target: { type: 'pat' },
      details: { name: 'local owner (this home)', expires: null, user: first.owner.id },
    });
    const firstId = made[0]?.target.id;
    const firstSecret = first.ownerToken;
    await first.close();

    // Opened again with its token in place: nothing is made, nothing recorded.
    const again = await openHome(root);
    expect(again.ownerToken).toBe(firstSecret);
    expect(await events(again)).toHaveLength(1);
    await again.close();

    // The token file gone: the old token is revoked and a new one made, both recorded.
    rmSync(join(root, 'owner.token'));
    const replaced = await openHome(root);
    const log = await events(replaced);
    expect(log.map((e) => e.action)).toEqual(['pat.created', 'pat.revoked', 'pat.created']);
    expect(log[1]?.target.id).toBe(firstId);
    expect(log[1]?.details).toEqual({ name: 'local owner (this home)', user: replaced.owner.id });
    const secondId = log[2]?.target.id;
    expect(secondId).not.toBe(firstId);
    const secondSecret = replaced.ownerToken;
    await replaced.close();

    // The file holding a token the home does not know: the same, once more.
    writeFileSync(join(root, 'owner.token'), 'pat_not_the_one\n', { mode: 0o600 });
    const third = await openHome(root);
    const all = await events(third);
    expect(all.map((e) => e.action)).toEqual([
      'pat.created',
      'pat.revoked',
      'pat.created',
      'pat.revoked',
      'pat.created',
    ]);
    expect(all[3]?.target.id).toBe(secondId);
    const text = JSON.stringify(all);
    for (const secret of [firstSecret, secondSecret, third.ownerToken]) expect(text).not.toContain(secret);
    await third.close();
  });
});
