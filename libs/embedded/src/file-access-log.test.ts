import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anAccessRecord, aUniqueClientId, describeAccessLogStoreContract } from '@rsd/testkit';
import { linesBackward, openFileAccessLogStore } from './file-access-log';

const NOW = new Date('2026-11-23T12:30:30.000Z');

async function aTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'rsd-access-log-'));
}

describeAccessLogStoreContract('files', async (now) => {
  const dir = await aTempDir();
  const store = await openFileAccessLogStore({ dir, now });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('file access log', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await aTempDir();
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('when the store is opened again, then the entries and the usage of before are still there', async () => {
    const clientId = aUniqueClientId();
    const records = [anAccessRecord(clientId, 3 * 3_600_000), anAccessRecord(clientId, 120_000), anAccessRecord(clientId, 5_000)];
    const first = await openFileAccessLogStore({ dir, now: () => NOW });
    await first.add(records);
    const usageBefore = (await first.usage([clientId], NOW)).get(clientId);
    await first.close();

    const second = await openFileAccessLogStore({ dir, now: () => NOW });

    expect(usageBefore).toEqual({ lastUsedAt: records[2]!.at, usage: { last24h: 3, last30d: 3 } });
    expect((await second.usage([clientId], NOW)).get(clientId)).toEqual(usageBefore);
    expect(await second.page(clientId, { limit: 10 })).toEqual([...records].reverse());
    await second.close();
  });

  test('when a crash tore the last line of a file, then that line is skipped and the next append starts a line of its own', async () => {
    const clientId = aUniqueClientId();
    const [before, after] = [anAccessRecord(clientId, 60_000), anAccessRecord(clientId, 1_000)];
    const store = await openFileAccessLogStore({ dir, now: () => NOW });
    await store.add([before]);
    await store.close();
    const [day] = await readdir(join(dir, 'entries'));
    await appendFile(join(dir, 'entries', day!, `${clientId}.ndjson`), '{"id":"torn","at":"2026-11-23T12:3');

    const reopened = await openFileAccessLogStore({ dir, now: () => NOW });
    await reopened.add([after]);

    expect(await reopened.page(clientId, { limit: 10 })).toEqual([after, before]);
    await reopened.close();
  });

  test('when a file is larger than a read chunk, then reading it backwards yields every line once, last first', async () => {
    const file = join(dir, 'lines.ndjson');
    const lines = Array.from({ length: 5_000 }, (_, n) => `{"n":${n},"text":"ünïcödé ${'x'.repeat(n % 50)}"}`);
    await writeFile(file, lines.join('\n') + '\n');

    const read: string[] = [];
    for await (const line of linesBackward(file)) read.push(line);

    expect(read).toEqual([...lines].reverse());
  });

  test('when records are written, then the files hold them without any Client ID repeated per line and in append order', async () => {
    const clientId = aUniqueClientId();
    const store = await openFileAccessLogStore({ dir, now: () => NOW });
    await store.add([anAccessRecord(clientId, 2_000), anAccessRecord(clientId, 1_000)]);
    await store.close();

    const [day] = await readdir(join(dir, 'entries'));
    const text = await readFile(join(dir, 'entries', day!, `${clientId}.ndjson`), 'utf8');

    expect(text.trim().split('\n')).toHaveLength(2);
    expect(text).not.toContain(clientId);
  });
});
