import { isBeyond, newestFirst } from './access-order';
import { bucketStart, DAY_MS, HOUR_MS, isSuccessfulRead, MINUTE_MS, usageBucketRanges, usageFrom, type UsageBucket } from './usage';

const NOW = new Date('2026-11-23T12:30:30.000Z');

/** The minute and hour buckets a store would hold for reads at these instants. */
function bucketsOf(instants: number[]): UsageBucket[] {
  const counts = new Map<string, UsageBucket>();
  for (const at of instants) {
    for (const grain of ['minute', 'hour'] as const) {
      const start = bucketStart(grain, at);
      const bucket = counts.get(`${grain} ${start}`) ?? { grain, start, reads: 0 };
      bucket.reads += 1;
      counts.set(`${grain} ${start}`, bucket);
    }
  }
  return [...counts.values()];
}

describe('usage windows (decision 20)', () => {
  test('when reads lie on either side of each window, then each window counts exactly those inside it', () => {
    const ago = (ms: number) => NOW.getTime() - ms;
    const reads = [
      ago(31 * DAY_MS),
      ago(30 * DAY_MS - MINUTE_MS),
      ago(2 * DAY_MS),
      ago(DAY_MS + 2 * MINUTE_MS),
      ago(DAY_MS - MINUTE_MS),
      ago(5 * HOUR_MS),
      ago(1_000),
    ];

    expect(usageFrom(bucketsOf(reads), NOW)).toEqual({ last24h: 3, last30d: 6 });
  });

  test('when a read becomes older than 24 hours, then it stays counted until its minute has passed too (at most 60 s), never less', () => {
    const read = NOW.getTime() - DAY_MS + 10_000;
    const at = (ms: number) => new Date(read + DAY_MS + ms);

    expect(usageFrom(bucketsOf([read]), at(0)).last24h).toBe(1);
    expect(usageFrom(bucketsOf([read]), at(-1)).last24h).toBe(1);
    expect(usageFrom(bucketsOf([read]), at(19_999)).last24h).toBe(1);
    expect(usageFrom(bucketsOf([read]), at(20_000)).last24h).toBe(0);
  });

  test('when a credential read every second for 30 days, then answering reads at most 720 hour and 180 minute buckets', () => {
    const ranges = usageBucketRanges(NOW);
    const count = (grain: 'minute' | 'hour') =>
      ranges
        .filter((range) => range.grain === grain)
        .reduce((sum, range) => sum + ((range.to ?? NOW.getTime() + 1) - range.from) / (grain === 'minute' ? MINUTE_MS : HOUR_MS), 0);

    expect(count('hour')).toBeLessThanOrEqual(720 + 24);
    expect(Math.ceil(count('minute'))).toBeLessThanOrEqual(180);
  });

  test.each([
    [200, true],
    [304, true],
    [401, false],
    [403, false],
    [404, false],
    [429, false],
    [500, false],
  ])('when a read was answered %i, then it counts as successful: %s', (status, successful) => {
    expect(isSuccessfulRead(status)).toBe(successful);
  });
});

describe('access-log order (decision 21)', () => {
  test('when records share an instant or a request id, then the request id and then the id order them, newest first', () => {
    const a = { at: '2026-11-23T12:00:00.000Z', requestId: 'r1', id: 'a' };
    const b = { at: '2026-11-23T12:00:00.000Z', requestId: 'r1', id: 'b' };
    const c = { at: '2026-11-23T12:00:00.000Z', requestId: 'r2', id: 'a' };
    const d = { at: '2026-11-23T12:00:00.001Z', requestId: 'r0', id: 'a' };

    expect([a, b, c, d].sort(newestFirst)).toEqual([d, c, b, a]);
    expect(isBeyond(a, b)).toBe(true);
    expect(isBeyond(b, b)).toBe(false);
    expect(isBeyond(d, a)).toBe(false);
  });
});
