import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredAuthorization } from '@rsd/domain';
import { describeAuthorizationStoreContract } from '@rsd/testkit';
import { DatabaseSync } from 'node:sqlite';
import { openSqliteAuthorizationStore, QUERIES } from './sqlite-authorization-store';

async function aTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'rsd-authorizations-'));
}

describeAuthorizationStoreContract('SQLite', async () => {
  const dir = await aTempDir();
  const store = openSqliteAuthorizationStore({ file: join(dir, 'rsd.sqlite') });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('SQLite authorization store', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await aTempDir();
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const record: StoredAuthorization = {
    clientId: 'rs_3kTMd9Qx7LwZp2VnB8cY1fRe',
    organizationId: 'acme',
    recipientType: 'auditor',
    recipientName: null,
    scopes: ['qr_score', 'score_trend'],
    keyDigest: 'c'.repeat(64),
    expiresAt: '2027-01-01T00:00:00.000Z',
    createdAt: '2026-11-20T08:00:00.000Z',
    revokedAt: null,
    expiredAt: null,
    revision: 1,
  };
  const created = { id: 'event-1', topic: 'rsd.authorizations.v1', key: record.clientId, value: '{"n":1}' };
  const revoked = { id: 'event-2', topic: 'rsd.authorizations.v1', key: record.clientId, value: '{"n":2}' };

  it('when the store is closed and opened again, then records and owed events are still there', async () => {
    const file = join(dir, 'rsd.sqlite');
    const first = openSqliteAuthorizationStore({ file });
    await first.create(record, [created]);
    const revokedRecord = { ...record, revokedAt: '2026-11-21T08:00:00.000Z', revision: 2 };
    await first.update(revokedRecord, 1, [revoked]);
    await first.markPublished(record.clientId, [created.id]);
    await first.close();

    const reopened = openSqliteAuthorizationStore({ file });

    expect(await reopened.find('acme', record.clientId)).toEqual(revokedRecord);
    expect(await reopened.pendingOutbox(10)).toEqual([{ clientId: record.clientId, entries: [revoked] }]);
    await reopened.close();
  });

  it('when the store is queried, then every read goes through an index and none scans the table', async () => {
    const file = join(dir, 'rsd.sqlite');
    const store = openSqliteAuthorizationStore({ file });
    await store.create(record, [created]);
    const db = new DatabaseSync(file);
    try {
      for (const [name, sql] of Object.entries(QUERIES)) {
        const plan = db
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all(
            ...sql
              .split('?')
              .slice(1)
              .map(() => 1),
          )
          .map((row) => String(row.detail));
        expect({ name, scans: plan.filter((step) => /^SCAN (authorizations)\b(?! USING)/.test(step)) }).toEqual({ name, scans: [] });
        expect({ name, usesIndex: plan.some((step) => /USING (COVERING )?INDEX|USING PRIMARY KEY/.test(step)) }).toEqual({
          name,
          usesIndex: true,
        });
      }
    } finally {
      db.close();
      await store.close();
    }
  });

  it('when changes are made concurrently, then each is applied once and in turn', async () => {
    const store = openSqliteAuthorizationStore({ file: join(dir, 'rsd.sqlite') });
    await store.create(record, []);

    const outcomes = await Promise.all([
      store.update({ ...record, revokedAt: '2026-11-21T08:00:00.000Z', revision: 2 }, 1, [revoked]),
      store.update({ ...record, expiredAt: '2026-11-21T08:00:00.000Z', revision: 2 }, 1, [created]),
    ]);

    expect(outcomes).toEqual([true, false]);
    expect((await store.find('acme', record.clientId))?.revokedAt).toBe('2026-11-21T08:00:00.000Z');
    await store.close();
  });

  it('when the store is closed, then further changes are refused', async () => {
    const store = openSqliteAuthorizationStore({ file: join(dir, 'rsd.sqlite') });
    await store.close();

    await expect(store.create(record, [])).rejects.toThrow('closed');
  });
});
