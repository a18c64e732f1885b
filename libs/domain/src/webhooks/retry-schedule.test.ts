import { nextRetry, retryCeilingMs, RETRY_SCHEDULE, type RetryDecision } from './retry-schedule';

const first = new Date('2026-11-21T08:00:00.000Z');
const SECOND = 1000;
const HOUR = 60 * 60 * SECOND;
const deadline = first.getTime() + 24 * HOUR;
const at = (offsetMs: number) => new Date(first.getTime() + offsetMs);
const always = (value: number) => () => value;

/** A seeded generator in [0, 1) (mulberry32), so that a run with varied waits is the same every time. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every attempt fails at once; the retries a receiver that never answers 2xx would get. */
function retriesOfADeadReceiver(random: () => number): Date[] {
  const attempts = [first];
  let decision: RetryDecision = nextRetry({ firstAttemptAt: first, attempt: 1, failedAt: first }, random);
  while (decision.outcome === 'retry') {
    attempts.push(decision.at);
    decision = nextRetry({ firstAttemptAt: first, attempt: decision.attempt, failedAt: decision.at }, random);
  }
  return attempts;
}

describe('retryCeilingMs', () => {
  test('when attempts fail one after another, then the ceilings grow by 3 from 5 s and stop at 2 h', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map(retryCeilingMs)).toEqual([
      5 * SECOND,
      15 * SECOND,
      45 * SECOND,
      135 * SECOND,
      405 * SECOND,
      1215 * SECOND,
      3645 * SECOND,
      2 * HOUR,
      2 * HOUR,
    ]);
  });

  test('when the attempt number is anything up to a very large one, then the ceiling never decreases and never passes the cap', () => {
    let previous = 0;
    for (const attempt of [...Array.from({ length: 200 }, (_, index) => index + 1), 10_000, Number.MAX_SAFE_INTEGER]) {
      const ceiling = retryCeilingMs(attempt);
      expect(ceiling).toBeGreaterThanOrEqual(previous);
      expect(ceiling).toBeLessThanOrEqual(RETRY_SCHEDULE.maxWaitMs);
      previous = ceiling;
    }
  });

  test.each([0, -1, 1.5, Number.NaN])('when the attempt number is %p, then it is a programming error', (attempt) => {
    expect(() => retryCeilingMs(attempt)).toThrow(RangeError);
  });
});

describe('nextRetry', () => {
  test('when the first attempt fails, then the next one is the second, between 1 s and 5 s later, as the jitter says', () => {
    const failed = { firstAttemptAt: first, attempt: 1, failedAt: at(10 * SECOND) };

    expect(nextRetry(failed, always(0))).toEqual({ outcome: 'retry', attempt: 2, at: at(11 * SECOND) });
    expect(nextRetry(failed, always(0.5))).toEqual({ outcome: 'retry', attempt: 2, at: at(13 * SECOND) });
    expect(nextRetry(failed, always(1))).toEqual({ outcome: 'retry', attempt: 2, at: at(15 * SECOND) });
  });

  test('when a late attempt fails, then the wait is drawn up to the 2 h cap (full jitter)', () => {
    const failed = { firstAttemptAt: first, attempt: 12, failedAt: at(3 * HOUR) };

    expect(nextRetry(failed, always(1))).toEqual({ outcome: 'retry', attempt: 13, at: at(5 * HOUR) });
    expect(nextRetry(failed, always(0.25))).toEqual({
      outcome: 'retry',
      attempt: 13,
      at: at(3 * HOUR + SECOND + 0.25 * (2 * HOUR - SECOND)),
    });
  });

  test('when the drawn wait would end after 24 h, then the last retry is due at 24 h exactly', () => {
    const failed = { firstAttemptAt: first, attempt: 30, failedAt: at(23 * HOUR) };

    expect(nextRetry(failed, always(1))).toEqual({ outcome: 'retry', attempt: 31, at: new Date(deadline) });
  });

  test('when an attempt fails at 24 h, or too close to it for even the shortest wait, then give up', () => {
    expect(nextRetry({ firstAttemptAt: first, attempt: 31, failedAt: new Date(deadline) }, always(0))).toEqual({ outcome: 'give-up' });
    expect(nextRetry({ firstAttemptAt: first, attempt: 31, failedAt: new Date(deadline - 999) }, always(0))).toEqual({
      outcome: 'give-up',
    });
    expect(nextRetry({ firstAttemptAt: first, attempt: 31, failedAt: new Date(deadline - 1000) }, always(0))).toEqual({
      outcome: 'retry',
      attempt: 32,
      at: new Date(deadline),
    });
  });

  test.each([
    ['the longest waits', always(1)],
    ['varied waits (seed 1)', seeded(1)],
    ['varied waits (seed 42)', seeded(42)],
    ['varied waits (seed 2026)', seeded(2026)],
  ])(
    'when a receiver never answers 2xx and the jitter gives %s, then every retry is later than the last and none is past 24 h',
    (_case, random) => {
      const attempts = retriesOfADeadReceiver(random);

      for (const [index, attempt] of attempts.entries()) {
        if (index === 0) continue;
        const previous = attempts[index - 1] as Date;
        expect(attempt.getTime() - previous.getTime()).toBeGreaterThanOrEqual(RETRY_SCHEDULE.minWaitMs);
        expect(attempt.getTime() - previous.getTime()).toBeLessThanOrEqual(RETRY_SCHEDULE.maxWaitMs);
        expect(attempt.getTime()).toBeLessThanOrEqual(deadline);
      }
      expect(attempts.at(-1)?.getTime()).toBe(deadline);
    },
  );

  test('when the jitter always gives the longest waits, then a dead receiver is tried 20 times in 24 h', () => {
    // The first attempt, 7 growing waits (1 h 31 min 5 s in all), 11 of 2 h, and a last one cut to end at 24 h.
    expect(retriesOfADeadReceiver(always(1))).toHaveLength(20);
  });

  test.each([-0.1, 1.1, Number.NaN])('when the jitter source returns %p, then it is a programming error', (value) => {
    expect(() => nextRetry({ firstAttemptAt: first, attempt: 1, failedAt: first }, always(value))).toThrow(RangeError);
  });
});
