import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AccessRecord } from '@rsd/contracts';
import { sealAccessRecords } from '@rsd/consumers';
import { openSqliteSubjectKeyStore } from '@rsd/embedded';
import { createLogger, subjectCipher } from '@rsd/platform';
import type { EventRecord, SubjectKeyStore } from '@rsd/ports';
import { aStoreInATempDirectoryPerTest } from '@rsd/testkit';
import { accessLogProjection } from './access-log-projection';

const log = createLogger('runtime', 'silent');
const aMessage = (value: string): EventRecord => ({ topic: 'rsd.access-log.v1', partition: 0, offset: '7', key: 'replica', value });
const record: AccessRecord = {
  id: 'id-1',
  clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
  at: '2026-11-20T10:00:00.000Z',
  resource: 'pillars',
  status: 403,
  code: 'INSUFFICIENT_SCOPE',
  clientAddress: '2001:db8::1',
  requestId: 'req-1',
};
/** The authorization store as the projection asks it: these Client IDs are grants it holds. */
const holding = (...clientIds: string[]) => ({
  knownClientIds: (asked: readonly string[]) => Promise.resolve(new Set(asked.filter((id) => clientIds.includes(id)))),
});

describe('access-log projection (distributed runtime)', () => {
  const keys: SubjectKeyStore = aStoreInATempDirectoryPerTest('access-log-projection', (dir) =>
    openSqliteSubjectKeyStore({ file: join(dir, 'subject-keys.db') }),
  );
  const masterKey = randomBytes(32);
  const cipher = () => subjectCipher({ store: keys, masterKey });
  test('when a batch arrives, then its records go to the store as they are', async () => {
    const added: AccessRecord[][] = [];
    const project = accessLogProjection(
      { add: (records) => Promise.resolve(void added.push([...records])) },
      holding(record.clientId),
      cipher(),
      log,
    );

    await project(aMessage(JSON.stringify({ records: [record] })));

    expect(added).toEqual([[record]]);
  });

  test("when a batch names a grant the store no longer holds (its organization offboarded), then only the others' records are kept", async () => {
    const added: AccessRecord[][] = [];
    const purged = { ...record, id: 'id-2', clientId: 'rs_BBBBBBBBBBBBBBBBBBBBBBBB' };
    const project = accessLogProjection(
      { add: (records) => Promise.resolve(void added.push([...records])) },
      holding(record.clientId),
      cipher(),
      log,
    );

    await project(aMessage(JSON.stringify({ records: [purged, record] })));
    await project(aMessage(JSON.stringify({ records: [purged] })));

    expect(added).toEqual([[record]]);
  });

  test("when a sealed batch arrives, then its addresses are opened into the store; once the grant's key is destroyed, they are null and the records stay", async () => {
    const added: AccessRecord[][] = [];
    const reading = cipher();
    const project = accessLogProjection(
      { add: (records) => Promise.resolve(void added.push([...records])) },
      holding(record.clientId),
      reading,
      log,
    );
    const value = await sealAccessRecords([record], cipher());
    expect(value).not.toContain(record.clientAddress);

    await project(aMessage(value));
    await keys.destroy(`grant:${record.clientId}`, '2026-12-03T07:00:00.000Z');
    reading.forget(`grant:${record.clientId}`);
    await project(aMessage(value));

    expect(added).toEqual([[record], [{ ...record, clientAddress: null }]]);
  });

  test('when a sealed part does not open (changed), then the message is skipped with its reason logged, and the stream goes on', async () => {
    const added: unknown[] = [];
    const warnings: unknown[] = [];
    const watched = { ...log, warn: (fields: unknown) => void warnings.push(fields) } as unknown as typeof log;
    const project = accessLogProjection(
      { add: (records) => Promise.resolve(void added.push(records)) },
      holding(record.clientId),
      cipher(),
      watched,
    );
    const sealed = JSON.parse(await sealAccessRecords([record], cipher())) as { sealed: { ciphertext: string }[] };
    sealed.sealed[0]!.ciphertext = `A${sealed.sealed[0]!.ciphertext.slice(1)}`;

    await expect(project(aMessage(JSON.stringify(sealed)))).resolves.toBeUndefined();

    expect(added).toEqual([]);
    expect(warnings).toEqual([
      {
        topic: 'rsd.access-log.v1',
        partition: 0,
        offset: '7',
        reason: `sealed value cannot be opened (tampered, subject grant:${record.clientId})`,
      },
    ]);
  });

  test.each([
    ['not JSON', '{"records": ['],
    ['no records', '{"records": []}'],
    ['a record whose status is text', JSON.stringify({ records: [{ ...record, status: '200' }] })],
    ['a record without a Client ID', JSON.stringify({ records: [{ ...record, clientId: undefined }] })],
  ])('when a message is %s, then it is skipped and the stream goes on', async (_name, value) => {
    const added: unknown[] = [];
    const project = accessLogProjection(
      { add: (records) => Promise.resolve(void added.push(records)) },
      holding(record.clientId),
      cipher(),
      log,
    );

    await expect(project(aMessage(value))).resolves.toBeUndefined();
    expect(added).toEqual([]);
  });

  test('when the store fails, then the message fails too, so that it is delivered again', async () => {
    const project = accessLogProjection(
      { add: () => Promise.reject(new Error('MongoDB is away')) },
      holding(record.clientId),
      cipher(),
      log,
    );

    await expect(project(aMessage(JSON.stringify({ records: [record] })))).rejects.toThrow('MongoDB is away');
  });
});
