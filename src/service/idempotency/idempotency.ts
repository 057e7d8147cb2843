import { createHash } from 'node:crypto';
import { LakeServiceError } from '../core/errors.js';
import type { MetadataDb } from '../store/metadata-db.js';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

export interface IdempotencyScope {
  organizationId: string;
  /** The person (for a PAT) or the key itself: another principal's identical key is a different request. */
  principalId: string;
  /** The operation the key is for (`queries.submit`); the store's column is still called endpoint. */
  operation: string;
}

export interface StoredOutcome {
  requestHash: string;
  resourceId: string;
  response: unknown;
}

export function hashRequest(...parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex');
}

/** Refuses keys clients cannot have meant: empty, longer than 255 characters, or with control characters. */
export function checkIdempotencyKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new LakeServiceError(
      'parameter_invalid',
      'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.',
      { param: 'Idempotency-Key' },
    );
  }
  return key;
}

/**
 * Idempotency keys and the response each first produced. Lookups and saves are meant to run inside the caller's
 * write transaction, together with the work they guard, so concurrent requests with one key create one thing.
 */
export class IdempotencyStore {
  constructor(private readonly db: MetadataDb) {}

  async find(
    scope: IdempotencyScope,
    key: string,
    now: number = Math.floor(Date.now() / 1000),
  ): Promise<StoredOutcome | undefined> {
    const row = await this.db.get<{ request_hash: string; resource_id: string; response: string }>(
      `SELECT request_hash, resource_id, response FROM idempotency_keys
         WHERE organization_id = ? AND principal_id = ? AND endpoint = ? AND idempotency_key = ? AND created > ?`,
      [scope.organizationId, scope.principalId, scope.operation, key, now - IDEMPOTENCY_TTL_SECONDS],
    );
    return row && { requestHash: row.request_hash, resourceId: row.resource_id, response: JSON.parse(row.response) };
  }

  /** The replayed response, or a 409 when the key was first used for a different request. */
  async replay(scope: IdempotencyScope, key: string, requestHash: string): Promise<StoredOutcome | undefined> {
    const found = await this.find(scope, key);
    if (found && found.requestHash !== requestHash) {
      throw new LakeServiceError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request. Use a new key for new work.',
        {
          param: 'Idempotency-Key',
        },
      );
    }
    return found;
  }

  async save(
    scope: IdempotencyScope,
    key: string,
    outcome: StoredOutcome,
    now: number = Math.floor(Date.now() / 1000),
  ): Promise<void> {
    await this.db.run(
      `INSERT INTO idempotency_keys (organization_id, principal_id, endpoint, idempotency_key, request_hash, resource_id, response, created)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (organization_id, principal_id, endpoint, idempotency_key) DO UPDATE SET request_hash = excluded.request_hash,
           resource_id = excluded.resource_id, response = excluded.response, created = excluded.created`,
      [
        scope.organizationId,
        scope.principalId,
        scope.operation,
        key,
        outcome.requestHash,
        outcome.resourceId,
        JSON.stringify(outcome.response),
        now,
      ],
    );
  }

  async purgeExpired(now: number = Math.floor(Date.now() / 1000)): Promise<void> {
    await this.db.run('DELETE FROM idempotency_keys WHERE created <= ?', [now - IDEMPOTENCY_TTL_SECONDS]);
  }
}
