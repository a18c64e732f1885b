import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredAuthorization } from '@rsd/domain';
import type { EventLog, EventRecord } from '@rsd/ports';
import { formatLines } from '../earlier-layout';
import { importEarlierData } from './import-earlier-data';
import { openSqliteAuthorizationStore } from './sqlite-authorization-store';
import { openSqliteEventLog } from './sqlite-event-log';

/** A data directory as the version before the embedded database wrote it: events.ndjson and authorizations.json. */
describe('importing a data directory written by an earlier version', () => {
  let dir: string;
  let file: string;
  const warnings: string[] = [];
  const log = { info: () => undefined, warn: (_: object, message: string) => warnings.push(message), error: () => undefined };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rsd-import-'));
    file = join(dir, 'rsd.sqlite');
    warnings.length = 0;
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const record = (clientId: string, createdAt: string, changes: Partial<StoredAuthorization> = {}): StoredAuthorization => ({
    clientId,
    organizationId: 'acme',
    recipientType: 'auditor',
    recipientName: null,
    scopes: ['qr_score'],
    keyDigest: 'c'.repeat(64),
    expiresAt: null,
    createdAt,
    revokedAt: null,
    expiredAt: null,
    revision: 1,
    ...changes,
  });
  const owed = { id: 'event-2', topic: 'rsd.authorizations.v1', key: 'rs_b', value: '{"n":2}' };
  const lines = [
    { topic: 'rsd.authorizations.v1', key: 'rs_a', value: '{"n":1}' },
    { topic: 'rsd.scores.v1', key: 'acme', value: '{"text":"quotes \\" newline \\n unicode é 🚀"}' },
    { topic: 'rsd.authorizations.v1', key: 'rs_b', value: '{"n":3}' },
  ];

  async function writeEarlierDirectory(events = formatLines(lines)): Promise<void> {
    await writeFile(join(dir, 'events.ndjson'), events);
    const authorizations = [
      { record: record('rs_a', '2026-11-20T08:00:00.000Z', { expiresAt: '2026-11-21T00:00:00.000Z' }), outbox: [] },
      { record: record('rs_b', '2026-11-21T08:00:00.000Z', { revokedAt: '2026-11-22T08:00:00.000Z', revision: 2 }), outbox: [owed] },
    ];
    await writeFile(join(dir, 'authorizations.json'), JSON.stringify({ authorizations }));
  }

  async function readAll(eventLog: EventLog): Promise<EventRecord[]> {
    const received: EventRecord[] = [];
    const subscription = await eventLog.subscribe({
      groupId: 'check',
      ephemeral: true,
      topics: ['rsd.authorizations.v1', 'rsd.scores.v1'],
      fromBeginning: true,
      handle: (one) => Promise.resolve(void received.push(one)),
    });
    await subscription.caughtUp;
    await subscription.close();
    return received;
  }

  it('when the embedded runtime first opens it, then every event, record and owed event is there and the files are kept aside', async () => {
    await writeEarlierDirectory();

    await importEarlierData({ dataDir: dir, file, log });

    const eventLog = openSqliteEventLog({ file });
    const store = openSqliteAuthorizationStore({ file });
    try {
      expect((await readAll(eventLog)).map(({ topic, key, value }) => ({ topic, key, value }))).toEqual(lines);
      expect((await store.list('acme')).map((stored) => stored.clientId)).toEqual(['rs_b', 'rs_a']);
      expect(await store.find('acme', 'rs_b')).toEqual(
        record('rs_b', '2026-11-21T08:00:00.000Z', { revokedAt: '2026-11-22T08:00:00.000Z', revision: 2 }),
      );
      expect(await store.pendingOutbox(10)).toEqual([{ clientId: 'rs_b', entries: [owed] }]);
      expect((await store.findDueForExpiry(new Date('2026-11-21T00:00:00.000Z'), 10)).map((due) => due.clientId)).toEqual(['rs_a']);
      // Decision 44: an imported grant with an expiry ahead gets its notices like any other.
      expect((await store.findDueForExpiryNotice(new Date('2026-11-14T00:00:00.000Z'), 10)).map((due) => due.clientId)).toEqual(['rs_a']);
      expect(await store.findDueForExpiryNotice(new Date('2026-11-13T23:59:59.999Z'), 10)).toEqual([]);
    } finally {
      await eventLog.close();
      await store.close();
    }
    expect((await readdir(dir)).filter((name) => !name.startsWith('rsd.sqlite')).sort()).toEqual([
      'authorizations.json.imported',
      'events.ndjson.imported',
    ]);
  });

  it('when it is opened again, then nothing is imported twice', async () => {
    await writeEarlierDirectory();
    await importEarlierData({ dataDir: dir, file, log });

    await importEarlierData({ dataDir: dir, file, log });

    const eventLog = openSqliteEventLog({ file });
    expect(await readAll(eventLog)).toHaveLength(3);
    await eventLog.close();
  });

  it('when the import stopped after its commit but before the rename, then the next start only renames the file', async () => {
    await writeEarlierDirectory();
    await importEarlierData({ dataDir: dir, file, log });
    await writeEarlierDirectory();

    await importEarlierData({ dataDir: dir, file, log });

    const eventLog = openSqliteEventLog({ file });
    expect(await readAll(eventLog)).toHaveLength(3);
    await eventLog.close();
  });

  it('when the last line was torn by a crash, then it is left out with a warning', async () => {
    await writeEarlierDirectory(`${formatLines(lines)}{"topic":"rsd.scores.v1","key":"acme","val`);

    await importEarlierData({ dataDir: dir, file, log });

    const eventLog = openSqliteEventLog({ file });
    expect(await readAll(eventLog)).toHaveLength(3);
    await eventLog.close();
    expect(warnings).toEqual(['left out a torn last record left by a crash']);
  });

  it('when a line in the middle cannot be read, then the import fails, imports nothing and leaves the file in place', async () => {
    await writeEarlierDirectory(`${formatLines(lines.slice(0, 1))}not json\n${formatLines(lines.slice(1))}`);

    await expect(importEarlierData({ dataDir: dir, file, log })).rejects.toThrow('corrupt');

    const eventLog = openSqliteEventLog({ file });
    expect(await readAll(eventLog)).toEqual([]);
    await eventLog.close();
    expect(await readdir(dir)).toContain('events.ndjson');
  });
});
