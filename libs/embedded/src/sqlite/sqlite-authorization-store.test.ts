import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { StoredAuthorization } from '@rsd/domain';
import { describeAccessReviewStoreContract, describeAuthorizationStoreContract, describeRecipientAccountStoreContract } from '@rsd/testkit';
import { aTempDatabasePerTest, onATempDatabase, planFindings } from '../testing/temp-database';
import { openSqliteAuthorizationStore, QUERIES } from './sqlite-authorization-store';
import { REVIEW_QUERIES } from './sqlite-access-reviews';

describeAuthorizationStoreContract('SQLite', () => onATempDatabase('authorizations', (file) => openSqliteAuthorizationStore({ file })));
describeRecipientAccountStoreContract('SQLite', () => onATempDatabase('authorizations', (file) => openSqliteAuthorizationStore({ file })));
describeAccessReviewStoreContract('SQLite', () => onATempDatabase('authorizations', (file) => openSqliteAuthorizationStore({ file })));

/**
 * How much a process's own memory (RssAnon) grows over one pass looking for the addresses kept for
 * alerts in the database `file`: in a child process, the store as built (dist), so that nothing else
 * of the test's runs in between.
 */
function residentGrowthMbOfAddressPass(file: string): number {
  const store = resolve(__dirname, '../../dist/sqlite/sqlite-authorization-store.js');
  const program = `
    const { readFileSync } = require('node:fs');
    const { openSqliteAuthorizationStore } = require(${JSON.stringify(store)});
    const anonKb = () => Number(/^RssAnon:\\s+(\\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
    (async () => {
      const store = openSqliteAuthorizationStore({ file: ${JSON.stringify(file)} });
      const before = anonKb();
      const found = await store.findWithAlertAddressesBefore(new Date(), 100);
      process.stdout.write(JSON.stringify({ growthKb: anonKb() - before, found: found.length }));
      await store.close();
    })();
  `;
  const child = spawnSync(process.execPath, ['-e', program], { encoding: 'utf8', timeout: 30_000 });
  if (child.status !== 0) throw new Error(`the probe failed: ${child.stderr}`);
  const { growthKb, found } = JSON.parse(child.stdout) as { growthKb: number; found: number };
  if (found !== 0) throw new Error(`the probe found ${found} records with addresses, none expected`);
  return growthKb / 1024;
}

describe('SQLite authorization store', () => {
  const temp = aTempDatabasePerTest('authorizations');

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
    const first = openSqliteAuthorizationStore({ file: temp.file });
    await first.create(record, [created]);
    const revokedRecord = { ...record, revokedAt: '2026-11-21T08:00:00.000Z', revision: 2 };
    await first.update(revokedRecord, 1, [revoked]);
    await first.markPublished(record.clientId, [created.id]);
    await first.close();

    const reopened = openSqliteAuthorizationStore({ file: temp.file });

    expect(await reopened.find('acme', record.clientId)).toEqual(revokedRecord);
    expect(await reopened.pendingOutbox(10)).toEqual([{ clientId: record.clientId, entries: [revoked] }]);
    await reopened.close();
  });

  it('when the store is opened again, then an offer still waits for its account and is listed for it', async () => {
    const offer: StoredAuthorization = { ...record, keyDigest: null, offeredAccountId: 'rcp_7Hq2LmX9pRt4Kc8Vw1Nz3Bd6' };
    const first = openSqliteAuthorizationStore({ file: temp.file });
    await first.create(offer, []);
    await first.close();

    const reopened = openSqliteAuthorizationStore({ file: temp.file });
    expect(await reopened.listOffers('rcp_7Hq2LmX9pRt4Kc8Vw1Nz3Bd6', { limit: 10 })).toEqual([offer]);
    await reopened.close();
  });

  it('when a database from before expiry notices is opened, then the records with an expiry ahead get their first notice, once', async () => {
    const first = openSqliteAuthorizationStore({ file: temp.file });
    await first.create({ ...record, expiresAt: '2026-11-23T08:00:00.000Z' }, []);
    await first.close();
    const earlier = new DatabaseSync(temp.file);
    earlier.exec('DROP TABLE expiry_notices; DROP TABLE schema_steps;');
    earlier.close();

    const reopened = openSqliteAuthorizationStore({ file: temp.file });
    const due = await reopened.findDueForExpiryNotice(new Date('2026-11-21T08:00:00.000Z'), 10);
    await reopened.update({ ...record, expiresAt: '2026-11-23T08:00:00.000Z', revokedAt: '2026-11-21T09:00:00.000Z', revision: 2 }, 1, []);
    await reopened.close();
    const again = openSqliteAuthorizationStore({ file: temp.file });

    expect(due.map(({ clientId }) => clientId)).toEqual([record.clientId]);
    expect(await again.findDueForExpiryNotice(new Date('2026-11-22T08:00:00.000Z'), 10)).toEqual([]);
    await again.close();
  });

  it("when a database from before the keys' table is opened, then its grants are found by each of their keys' digests", async () => {
    const first = openSqliteAuthorizationStore({ file: temp.file });
    await first.create({ ...record, previousKeyDigest: 'd'.repeat(64) }, []);
    await first.close();
    const earlier = new DatabaseSync(temp.file);
    earlier.exec('DROP TABLE authorization_keys');
    earlier.close();

    const reopened = openSqliteAuthorizationStore({ file: temp.file });

    expect((await reopened.findByKeyDigest('c'.repeat(64)))?.clientId).toBe(record.clientId);
    // The previous key's too: each field's filling once asked whether the table was still empty, and after the first it was not.
    expect((await reopened.findByKeyDigest('d'.repeat(64)))?.clientId).toBe(record.clientId);
    await reopened.close();
  });

  it("when the store is opened again, then the keys' table is not filled again: no record is read", async () => {
    const first = openSqliteAuthorizationStore({ file: temp.file });
    await first.create(record, []);
    await first.close();
    // A record that reading would fail on: the keys' filling once asked of every record whether it was needed.
    const written = new DatabaseSync(temp.file);
    written.prepare("UPDATE authorizations SET record = '{' WHERE client_id = ?").run(record.clientId);
    written.close();

    const reopened = openSqliteAuthorizationStore({ file: temp.file });

    expect(await reopened.knownClientIds([record.clientId])).toEqual(new Set([record.clientId]));
    await reopened.close();
  });

  it('when the addresses kept for alerts are looked for in every record, then the records read do not stay in memory', async () => {
    const first = openSqliteAuthorizationStore({ file: temp.file });
    await first.close();
    // 20,000 records of some 700 bytes, as at 20k authorizations: 15 MB of pages, most of the shared connection's
    // page cache of 16 MiB. (Smaller than a page each: a larger record's overflow pages are read past the cache.)
    const written = new DatabaseSync(temp.file);
    const insert = written.prepare(
      "INSERT INTO authorizations (client_id, organization_id, created_at, revision, ended, record) VALUES (?, 'acme', ?, 1, 0, ?)",
    );
    const key = written.prepare('INSERT INTO authorization_keys (key_digest, client_id) VALUES (?, ?)');
    written.exec('BEGIN');
    for (let n = 0; n < 20_000; n += 1) {
      const clientId = `rs_${String(n).padStart(24, '0')}`;
      const keyDigest = String(n).padStart(64, '0');
      insert.run(clientId, record.createdAt, JSON.stringify({ ...record, clientId, keyDigest, recipientName: 'x'.repeat(400) }));
      key.run(keyDigest, clientId);
    }
    written.exec('COMMIT');
    written.close();

    expect(residentGrowthMbOfAddressPass(temp.file)).toBeLessThan(4);
  });

  it('when the store is queried, then every read goes through an index and none scans the table', async () => {
    const store = openSqliteAuthorizationStore({ file: temp.file });
    await store.create(record, [created]);

    const findings = planFindings(temp.file, QUERIES, ['authorizations', 'expiry_notices', 'account_offers']);

    expect(findings.map(({ name, scans, usesIndex }) => ({ name, scans, usesIndex }))).toEqual(
      Object.keys(QUERIES).map((name) => ({ name, scans: [], usesIndex: true })),
    );
    await store.close();
  });

  it("when access reviews are read (decision 54), then each read goes through the reviews' indexes and none scans the table", async () => {
    const store = openSqliteAuthorizationStore({ file: temp.file });
    await store.create(record, [created]);

    const findings = planFindings(temp.file, REVIEW_QUERIES, ['access_reviews']);

    expect(findings.map(({ name, scans, usesIndex }) => ({ name, scans, usesIndex }))).toEqual(
      Object.keys(REVIEW_QUERIES).map((name) => ({ name, scans: [], usesIndex: true })),
    );
    await store.close();
  });

  it('when changes are made concurrently, then each is applied once and in turn', async () => {
    const store = openSqliteAuthorizationStore({ file: temp.file });
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
    const store = openSqliteAuthorizationStore({ file: temp.file });
    await store.close();

    await expect(store.create(record, [])).rejects.toThrow('closed');
  });
});
