import type { AccessRecord } from '@rsd/contracts';
import { createLogger } from '@rsd/platform';
import type { EventRecord } from '@rsd/ports';
import { accessLogProjection } from './access-log-projection';

const log = createLogger('credentials', 'silent');
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

describe('access-log projection (distributed runtime)', () => {
  test('when a batch arrives, then its records go to the store as they are', async () => {
    const added: AccessRecord[][] = [];
    const project = accessLogProjection({ add: (records) => Promise.resolve(void added.push([...records])) }, log);

    await project(aMessage(JSON.stringify({ records: [record] })));

    expect(added).toEqual([[record]]);
  });

  test.each([
    ['not JSON', '{"records": ['],
    ['no records', '{"records": []}'],
    ['a record whose status is text', JSON.stringify({ records: [{ ...record, status: '200' }] })],
    ['a record without a Client ID', JSON.stringify({ records: [{ ...record, clientId: undefined }] })],
  ])('when a message is %s, then it is skipped and the stream goes on', async (_name, value) => {
    const added: unknown[] = [];
    const project = accessLogProjection({ add: (records) => Promise.resolve(void added.push(records)) }, log);

    await expect(project(aMessage(value))).resolves.toBeUndefined();
    expect(added).toEqual([]);
  });

  test('when the store fails, then the message fails too, so that it is delivered again', async () => {
    const project = accessLogProjection({ add: () => Promise.reject(new Error('MongoDB is away')) }, log);

    await expect(project(aMessage(JSON.stringify({ records: [record] })))).rejects.toThrow('MongoDB is away');
  });
});
