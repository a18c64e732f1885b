import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { AccessRecord } from '@rsd/contracts';
import { anAccessRecord, aUniqueClientId, describeAccessLogStoreContract } from '@rsd/testkit';
import { aTempDatabasePerTest, onATempDatabase, planFindings } from '../testing/temp-database';
import { CHANGES, QUERIES } from './access-log-tables';
import { openSqliteAccessLog, openSqliteAccessLogStore, PRUNE_BATCH } from './sqlite-access-log';

const NOW = new Date('2026-11-23T12:30:30.000Z');
const MINUTE = 60_000;
const DAY = 86_400_000;

describeAccessLogStoreContract('SQLite', () => onATempDatabase('access-log', (file) => openSqliteAccessLogStore({ file })));

describe('SQLite access log', () => {
  const temp = aTempDatabasePerTest('access-log');

  it('when the store is opened again, then the entries and the usage of before are still there', async () => {
    const clientId = aUniqueClientId();
    const records = [anAccessRecord(clientId, 3 * 3_600_000), anAccessRecord(clientId, 2 * MINUTE), anAccessRecord(clientId, 5_000)];
    const first = openSqliteAccessLogStore({ file: temp.file });
    await first.add(records);
    const usageBefore = (await first.usage([clientId], NOW)).get(clientId);
    await first.close();

    const second = openSqliteAccessLogStore({ file: temp.file });

    expect(usageBefore).toEqual({ lastUsedAt: records[2]!.at, usage: { last24h: 3, last30d: 3 } });
    expect((await second.usage([clientId], NOW)).get(clientId)).toEqual(usageBefore);
    expect(await second.page(clientId, { limit: 10 })).toEqual([...records].reverse());
    await second.close();
  });

  it('when the database is from before certificate fetches were described, then its entries are kept and the column is added', async () => {
    const clientId = aUniqueClientId();
    const before = anAccessRecord(clientId, 2 * MINUTE);
    const first = openSqliteAccessLogStore({ file: temp.file });
    await first.add([before]);
    await first.close();
    const db = new DatabaseSync(temp.file);
    db.exec('ALTER TABLE access_log DROP COLUMN certificate');
    db.close();

    const second = openSqliteAccessLogStore({ file: temp.file });
    const fetched = anAccessRecord(clientId, MINUTE, { resource: 'certificate', certificate: { asOf: '2026-11-20', format: 'json' } });
    await second.add([fetched]);

    expect(await second.page(clientId, { limit: 10 })).toEqual([fetched, before]);
    await second.close();
  });

  it('when a batch is added again, then its records are listed and counted once', async () => {
    const clientId = aUniqueClientId();
    const store = openSqliteAccessLogStore({ file: temp.file });
    const batch = [anAccessRecord(clientId, 2 * MINUTE), anAccessRecord(clientId, MINUTE)];
    await store.add(batch);

    await store.add([...batch, anAccessRecord(clientId, 1_000)]);

    expect(await store.page(clientId, { limit: 10 })).toHaveLength(3);
    expect((await store.usage([clientId], NOW)).get(clientId)?.usage).toEqual({ last24h: 3, last30d: 3 });
    await store.close();
  });

  it('when a batch larger than one insert statement is partly added again, then each record is listed and counted once', async () => {
    const clientId = aUniqueClientId();
    const store = openSqliteAccessLogStore({ file: temp.file });
    // Newest first, as a page lists them.
    const records = Array.from({ length: 100 }, (_, index) => anAccessRecord(clientId, (index + 1) * 1_000));
    // Every third record first: each 32-record statement of the second batch then finds some already there.
    await store.add(records.filter((_, index) => index % 3 === 0));

    await store.add(records);

    expect(await store.page(clientId, { limit: 500 })).toEqual(records);
    expect((await store.usage([clientId], NOW)).get(clientId)?.usage).toEqual({ last24h: 100, last30d: 100 });
    await store.close();
  });

  it('when the store is read or pruned, then every statement goes through an index and none scans a table or sorts', async () => {
    const store = openSqliteAccessLogStore({ file: temp.file });
    await store.add([anAccessRecord(aUniqueClientId(), MINUTE)]);
    // The inserts look nothing up but their own key.
    const statements = { ...QUERIES, pruneClient: CHANGES.pruneClient, pruneUsage: CHANGES.pruneUsage };

    const findings = planFindings(temp.file, statements, ['access_log', 'access_usage', 'access_last_use']);

    expect(findings).toEqual(Object.keys(statements).map((name) => ({ name, scans: [], sorts: [], usesIndex: true })));
    await store.close();
  });

  it('when more records than a batch are pruned, then they go a batch per turn, and old usage goes while the last use stays', async () => {
    const [busy, other, silent] = [aUniqueClientId(), aUniqueClientId(), aUniqueClientId()];
    const store = openSqliteAccessLogStore({ file: temp.file });
    const old: AccessRecord[] = [];
    for (let n = 0; n < 2.5 * PRUNE_BATCH; n += 1) old.push(anAccessRecord(n % 4 === 0 ? other : busy, 95 * DAY - n * MINUTE));
    const silentRead = anAccessRecord(silent, 40 * DAY);
    const recent = anAccessRecord(busy, MINUTE);
    await store.add([...old, silentRead, recent]);
    let turns = 0;
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);

    await store.prune(new Date(NOW.getTime() - 90 * DAY), NOW);

    ticking = false;
    expect(turns).toBeGreaterThanOrEqual(Math.floor(old.length / PRUNE_BATCH));
    expect(await store.page(busy, { limit: 10 })).toEqual([recent]);
    expect(await store.page(other, { limit: 10 })).toEqual([]);
    expect((await store.usage([silent], NOW)).get(silent)).toEqual({ lastUsedAt: silentRead.at, usage: { last24h: 0, last30d: 0 } });
    await store.close();
  });

  it('when the store is closed, then adding is refused', async () => {
    const store = openSqliteAccessLogStore({ file: temp.file });
    await store.close();

    await expect(store.add([anAccessRecord(aUniqueClientId(), 0)])).rejects.toThrow('the access log is closed');
  });

  describe('published, through the writer thread', () => {
    it('when a batch is partly published again, then each record is listed and counted once', async () => {
      const clientId = aUniqueClientId();
      const accessLog = await openSqliteAccessLog({ file: temp.file });
      const records = Array.from({ length: 100 }, (_, index) => anAccessRecord(clientId, (index + 1) * 1_000));
      await accessLog.publish(records.filter((_, index) => index % 3 === 0));

      await accessLog.publish(records);

      const store = await accessLog.openStore();
      expect(await store.page(clientId, { limit: 500 })).toEqual(records);
      expect((await store.usage([clientId], NOW)).get(clientId)).toEqual({
        lastUsedAt: records[0]!.at,
        usage: { last24h: 100, last30d: 100 },
      });
      await accessLog.close();
    });

    it('when one batch holds a record twice, then the record is listed and counted once and the others all are', async () => {
      const clientId = aUniqueClientId();
      const accessLog = await openSqliteAccessLog({ file: temp.file });
      const records = Array.from({ length: 40 }, (_, index) => anAccessRecord(clientId, (index + 1) * 1_000));

      await accessLog.publish([...records, records[7]!]);

      const store = await accessLog.openStore();
      expect(await store.page(clientId, { limit: 500 })).toEqual(records);
      expect((await store.usage([clientId], NOW)).get(clientId)?.usage).toEqual({ last24h: 40, last30d: 40 });
      await accessLog.close();
    });

    it('when batches are handed over and the log is closed at once, then every one is written first', async () => {
      const clientId = aUniqueClientId();
      const accessLog = await openSqliteAccessLog({ file: temp.file });
      const batches = Array.from({ length: 5 }, (_, batch) =>
        Array.from({ length: 50 }, (_, index) => anAccessRecord(clientId, (batch * 50 + index + 1) * 1_000)),
      );
      const published = Promise.all(batches.map((batch) => accessLog.publish(batch)));

      await accessLog.close();

      await expect(published).resolves.toBeDefined();
      await expect(accessLog.publish([anAccessRecord(clientId, 1)])).rejects.toThrow('the access log is closed');
      const reopened = openSqliteAccessLogStore({ file: temp.file });
      expect(await reopened.page(clientId, { limit: 500 })).toHaveLength(250);
      await reopened.close();
    });

    it('when a large batch is written, then the event loop goes on meanwhile', async () => {
      const clientId = aUniqueClientId();
      const accessLog = await openSqliteAccessLog({ file: temp.file });
      const records = Array.from({ length: 20_000 }, (_, index) => anAccessRecord(clientId, index + 1));
      let turns = 0;
      let written = false;
      const turn = (): void => {
        turns += 1;
        if (!written) setImmediate(turn);
      };
      setImmediate(turn);

      await accessLog.publish(records);
      written = true;

      // On the loop's own thread the batch would be one synchronous insert: no turn could run until it ended.
      expect(turns).toBeGreaterThan(10);
      expect((await (await accessLog.openStore()).usage([clientId], NOW)).get(clientId)?.usage.last24h).toBe(20_000);
      await accessLog.close();
    });
  });

  describe('a data directory of an earlier version, with its access log in files', () => {
    const clientId = aUniqueClientId();
    const [older, newer] = [anAccessRecord(clientId, 25 * 3_600_000), anAccessRecord(clientId, 2 * MINUTE, { status: 304 })];
    const line = ({ clientId: _, ...entry }: AccessRecord) => `${JSON.stringify(entry)}\n`;
    const warnings: string[] = [];
    const log = { info: () => undefined, warn: (_: object, message: string) => warnings.push(message), error: () => undefined };

    /** As that version wrote it: entries per day and Client ID (one torn by a crash), usage per day, a last use kept. */
    async function writeEarlierAccessLog(): Promise<string> {
      const dir = join(temp.dir, 'access-log');
      for (const record of [older, newer]) {
        await mkdir(join(dir, 'entries', record.at.slice(0, 10)), { recursive: true });
        const torn = record === older ? '{"id":"torn","at":"2026-11-2\n' : '';
        await writeFile(join(dir, 'entries', record.at.slice(0, 10), `${clientId}.ndjson`), torn + line(record));
      }
      await mkdir(join(dir, 'usage'));
      const usage = (record: AccessRecord) =>
        `${JSON.stringify({ clientId, minute: `${record.at.slice(0, 16)}:00.000Z`, reads: 1, lastUsedAt: record.at })}\n`;
      await writeFile(join(dir, 'usage', `${older.at.slice(0, 10)}.ndjson`), usage(older));
      await writeFile(join(dir, 'usage', `${newer.at.slice(0, 10)}.ndjson`), usage(newer));
      await writeFile(
        join(dir, 'usage', 'last-used.ndjson'),
        `${JSON.stringify({ clientId: 'rs_silent', lastUsedAt: '2026-01-01T00:00:00.000Z' })}\n`,
      );
      return dir;
    }

    beforeEach(() => {
      warnings.length = 0;
    });

    it('when the access log opens, then the entries, usage and last uses are imported and the directory renamed', async () => {
      const importFrom = await writeEarlierAccessLog();

      const accessLog = await openSqliteAccessLog({ file: join(temp.dir, 'access-log.sqlite'), importFrom, log });

      const store = await accessLog.openStore();
      expect(await store.page(clientId, { limit: 10 })).toEqual([newer, older]);
      const usage = await store.usage([clientId, 'rs_silent'], NOW);
      expect(usage.get(clientId)).toEqual({ lastUsedAt: newer.at, usage: { last24h: 1, last30d: 2 } });
      expect(usage.get('rs_silent')).toEqual({ lastUsedAt: '2026-01-01T00:00:00.000Z', usage: { last24h: 0, last30d: 0 } });
      expect(warnings).toEqual(['left out unreadable lines of the earlier access log']);
      expect(await readdir(temp.dir)).toEqual(expect.arrayContaining(['access-log.imported', 'access-log.sqlite']));
      expect(await readdir(temp.dir)).not.toContain('access-log');
      await accessLog.close();
    });

    it('when the process stopped between the import and the rename, then the next start only renames', async () => {
      const file = join(temp.dir, 'access-log.sqlite');
      const importFrom = await writeEarlierAccessLog();
      await (await openSqliteAccessLog({ file, importFrom, log })).close();
      await rename(`${importFrom}.imported`, importFrom);

      const accessLog = await openSqliteAccessLog({ file, importFrom, log });

      const store = await accessLog.openStore();
      expect((await store.usage([clientId], NOW)).get(clientId)?.usage).toEqual({ last24h: 1, last30d: 2 });
      expect(await store.page(clientId, { limit: 10 })).toHaveLength(2);
      expect(await readdir(temp.dir)).toEqual(expect.arrayContaining(['access-log.imported', 'access-log.sqlite']));
      expect(await readdir(temp.dir)).not.toContain('access-log');
      await accessLog.close();
    });
  });
});
