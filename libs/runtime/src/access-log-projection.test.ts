import type { AccessRecord } from '@rsd/contracts';
import { createLogger } from '@rsd/platform';
import type { EventRecord } from '@rsd/ports';
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
  test('when a batch arrives, then its records go to the store as they are', async () => {
    const added: AccessRecord[][] = [];
    const project = accessLogProjection(
      { add: (records) => Promise.resolve(void added.push([...records])) },
      holding(record.clientId),
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
      log,
    );

    await project(aMessage(JSON.stringify({ records: [purged, record] })));
    await project(aMessage(JSON.stringify({ records: [purged] })));

    expect(added).toEqual([[record]]);
  });

  test.each([
    ['not JSON', '{"records": ['],
    ['no records', '{"records": []}'],
    ['a record whose status is text', JSON.stringify({ records: [{ ...record, status: '200' }] })],
    ['a record without a Client ID', JSON.stringify({ records: [{ ...record, clientId: undefined }] })],
  ])('when a message is %s, then it is skipped and the stream goes on', async (_name, value) => {
    const added: unknown[] = [];
    const project = accessLogProjection({ add: (records) => Promise.resolve(void added.push(records)) }, holding(record.clientId), log);

    await expect(project(aMessage(value))).resolves.toBeUndefined();
    expect(added).toEqual([]);
  });

  test('when the store fails, then the message fails too, so that it is delivered again', async () => {
    const project = accessLogProjection({ add: () => Promise.reject(new Error('MongoDB is away')) }, holding(record.clientId), log);

    await expect(project(aMessage(JSON.stringify({ records: [record] })))).rejects.toThrow('MongoDB is away');
  });
});
