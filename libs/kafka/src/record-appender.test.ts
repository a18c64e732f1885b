import { sendSized } from './record-appender';

describe('an append cut into parts a broker takes', () => {
  const record = (n: number, bytes: number) => ({ key: `k${n}`, value: 'v'.repeat(bytes) });

  it('when the records fit in one part, then they are sent as one', () => {
    const records = [record(1, 100), record(2, 100)];
    expect(sendSized(records, 1_000)).toEqual([records]);
  });

  it('when they do not, then each part stays within the limit and the order is kept', () => {
    const records = Array.from({ length: 10 }, (_, n) => record(n, 300));
    const parts = sendSized(records, 1_000);
    expect(parts.flat()).toEqual(records);
    expect(parts.map((part) => part.length)).toEqual([2, 2, 2, 2, 2]);
  });

  it('when one record alone is larger than the limit, then it goes in a part of its own', () => {
    const records = [record(1, 10), record(2, 5_000), record(3, 10)];
    expect(sendSized(records, 1_000)).toEqual([[records[0]], [records[1]], [records[2]]]);
  });

  it('when there is nothing to send, then there is no part', () => {
    expect(sendSized([], 1_000)).toEqual([]);
  });
});
