import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openRecord } from '@rsd/consumers';
import { TOPICS } from '@rsd/contracts';
import { SUBJECT_KEYS_MASTER_KEY_SECRET, subjectCipher } from '@rsd/platform';
import { aDataDirectoryWrittenInClear, clearEventsOf } from '../testing/clear-data-directory';
import { TEST_SUBJECT_KEYS_MASTER_KEY } from '../testing/sealed-data-directory';
import { aTempDirectoryPerTest } from '../testing/temp-database';
import { openEmbeddedDatabase } from './database';
import { sealEmbeddedLog } from './seal-log';
import { openSqliteSubjectKeyStore, SUBJECT_KEYS_DATABASE } from './sqlite-subject-key-store';

describe('rsd seal-log: an embedded log written before sealing, rewritten sealed (decision 56)', () => {
  const temp = aTempDirectoryPerTest('seal-log');
  const acme = clearEventsOf('acme', 'Clearwater Recipient Ltd', '192.0.2.96/28', '203.0.113.77');
  const globex = clearEventsOf('globex', 'Globex Harbour Recipient', '198.51.100.160/28', '203.0.113.201');
  const readable = [...acme.readable, ...globex.readable];

  const rows = () => {
    const db = new DatabaseSync(join(temp.dir, 'rsd.sqlite'), { readOnly: true });
    try {
      return db.prepare('SELECT seq, topic, key, value FROM events ORDER BY seq').all() as {
        seq: number;
        topic: string;
        key: string;
        value: string;
      }[];
    } finally {
      db.close();
    }
  };
  /** Every byte of the log's database and its journals, as text. */
  const fileBytes = async () => {
    const files = (await readdir(temp.dir)).filter((name) => name.startsWith('rsd.sqlite'));
    return Promise.all(files.map(async (name) => (await readFile(join(temp.dir, name))).toString('latin1')));
  };
  const readableIn = (haystacks: string[]) => readable.filter((needle) => haystacks.some((haystack) => haystack.includes(needle)));

  it('when the log is sealed, then no row and no byte of the file holds a name, an address or a score, every position is kept, and each event opens as it was', async () => {
    await aDataDirectoryWrittenInClear(temp.dir, [acme, globex]);
    const before = rows();
    expect(readableIn(before.map((row) => row.value))).toEqual(readable);

    const report = await sealEmbeddedLog({ dataDir: temp.dir, batchSize: 2 });

    expect(report).toMatchObject({
      records: 7,
      vacuumed: true,
      unsealable: [],
      topics: {
        [TOPICS.authorizations]: { sealed: 4, erased: 0, 'already-sealed': 0 },
        [TOPICS.scores]: { sealed: 2 },
        [TOPICS.deadLetter]: { sealed: 1 },
      },
    });
    const after = rows();
    expect(after.map(({ seq, topic, key }) => ({ seq, topic, key }))).toEqual(before.map(({ seq, topic, key }) => ({ seq, topic, key })));
    expect(readableIn(after.map((row) => row.value))).toEqual([]);
    expect(readableIn(await fileBytes())).toEqual([]);

    const store = openSqliteSubjectKeyStore({ file: join(temp.dir, SUBJECT_KEYS_DATABASE) });
    const cipher = subjectCipher({ store, masterKey: TEST_SUBJECT_KEYS_MASTER_KEY });
    try {
      for (const [index, row] of after.entries()) {
        if (row.topic === TOPICS.deadLetter) continue;
        const { parsed } = await openRecord(row, cipher);
        expect(parsed).toEqual({ event: JSON.parse(before[index]!.value) as unknown });
      }
      const letter = JSON.parse(after.find((row) => row.topic === TOPICS.deadLetter)!.value) as { reason: string; value: string };
      expect(letter.reason).toBe('an older rule refused it');
      expect((await openRecord({ topic: TOPICS.authorizations, value: letter.value }, cipher)).parsed).toEqual({ event: acme.grant });
    } finally {
      await store.close();
    }

    const again = await sealEmbeddedLog({ dataDir: temp.dir });
    expect(again).toMatchObject({ records: 7, vacuumed: false, topics: { [TOPICS.authorizations]: { sealed: 0, 'already-sealed': 4 } } });
    expect(rows()).toEqual(after);
  });

  it('when a run is cut short, then what it committed stays sealed and the next run seals the rest', async () => {
    await aDataDirectoryWrittenInClear(temp.dir, [acme, globex]);

    await expect(sealEmbeddedLog({ dataDir: temp.dir, batchSize: 3, stopAfterBatches: 1 })).rejects.toThrow(/stopped after 1 batch/);
    expect(rows().filter((row) => row.value.includes('"rsdsealed":1'))).toHaveLength(3);

    const resumed = await sealEmbeddedLog({ dataDir: temp.dir, batchSize: 3 });
    expect(resumed.topics[TOPICS.authorizations]).toMatchObject({ sealed: 2, 'already-sealed': 2 });
    expect(readableIn(await fileBytes())).toEqual([]);
  });

  it("when an organization's key was destroyed before the rewrite, then its events are sealed in the erased form: nothing of them is written", async () => {
    await aDataDirectoryWrittenInClear(temp.dir, [acme, globex]);
    const store = openSqliteSubjectKeyStore({ file: join(temp.dir, SUBJECT_KEYS_DATABASE) });
    await store.destroy('organization:acme', new Date().toISOString());
    await store.close();

    const report = await sealEmbeddedLog({ dataDir: temp.dir });

    // Acme's grant and score, and the dead letter's copy of its grant; its alert seals the address under the grant's key, not acme's.
    expect(report.topics).toMatchObject({
      [TOPICS.authorizations]: { sealed: 3, erased: 1 },
      [TOPICS.scores]: { sealed: 1, erased: 1 },
      [TOPICS.deadLetter]: { erased: 1 },
    });
    expect(rows().filter((row) => row.value.includes('{"subject":"organization:acme","erased":true}'))).toHaveLength(2);
    expect(readableIn(await fileBytes())).toEqual([]);
  });

  it('when the product has the directory open, or no master key is there, then it is refused and nothing changes', async () => {
    await aDataDirectoryWrittenInClear(temp.dir, [acme]);
    const before = rows();
    const running = openEmbeddedDatabase(join(temp.dir, 'rsd.sqlite'));
    await expect(sealEmbeddedLog({ dataDir: temp.dir })).rejects.toThrow(
      /is in use: a process \(the product, or a rebuild of its views\) has rsd\.sqlite open\. Stop it before sealing its log/,
    );
    await running.close();

    await rm(join(temp.dir, SUBJECT_KEYS_MASTER_KEY_SECRET.file));
    await expect(sealEmbeddedLog({ dataDir: temp.dir })).rejects.toThrow(
      /The master key is neither in .*subject-keys-master\.key nor in SUBJECT_KEYS_MASTER_KEY: set SUBJECT_KEYS_MASTER_KEY as the product has it/,
    );
    await expect(sealEmbeddedLog({ dataDir: join(temp.dir, 'elsewhere') })).rejects.toThrow(/holds no rsd\.sqlite/);
    expect(rows()).toEqual(before);
  });

  it('when another master key is given than the one that sealed the log, then it is refused before anything is rewritten', async () => {
    await aDataDirectoryWrittenInClear(temp.dir, [acme]);
    await sealEmbeddedLog({ dataDir: temp.dir, stopAfterBatches: 1, batchSize: 1 }).catch(() => undefined);
    const before = rows();

    await expect(sealEmbeddedLog({ dataDir: temp.dir, configuredSubjectKeysMasterKey: Buffer.alloc(32, 9) })).rejects.toThrow(
      /The log holds values sealed for 2 data subject\(s\), and the key store and the master key do not open 2 with wrong-master-key \(grant:rs_\w+, organization:acme\)\. .*nothing was rewritten/,
    );
    expect(rows()).toEqual(before);
  });
});
