import { ConfigError } from './config';
import { capturedLog } from '@rsd/testkit';
import { backoffDelay, startWithRetries, StartDeadlineError, type FailedAttempt, type StartOptions } from './start-with-retries';

/** An attempt that fails `failures` times with `error`, then succeeds with 'app'; records what it opened and closed. */
function flakyAttempt(failures: number, error: () => unknown = () => new Error('connect ECONNREFUSED')) {
  const events: string[] = [];
  let calls = 0;
  const attempt: Parameters<typeof startWithRetries<string>>[0] = async (scope) => {
    calls += 1;
    const n = calls;
    events.push(`open runtime ${n}`);
    scope.closeOnStop(() => Promise.resolve(void events.push(`close runtime ${n}`)));
    await Promise.resolve();
    if (n <= failures) throw error();
    events.push(`open module ${n}`);
    scope.closeOnStop(() => Promise.resolve(void events.push(`stop module ${n}`)));
    return 'app';
  };
  return { attempt, events, calls: () => calls };
}

describe('backoffDelay', () => {
  const backoff = { firstDelayMs: 250, maxDelayMs: 5_000 };

  test('when attempts fail one after another, then the pause doubles up to the cap', () => {
    const upper = [1, 2, 3, 4, 5, 6, 7, 20].map((attempt) => backoffDelay(attempt, backoff, () => 1));
    expect(upper).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });

  test('when jittered, then a pause lies between half its capped delay and the whole of it', () => {
    expect(backoffDelay(3, backoff, () => 0)).toBe(500);
    expect(backoffDelay(3, backoff, () => 0.5)).toBe(750);
    expect(backoffDelay(30, backoff, () => 0)).toBe(2500);
  });
});

describe('startWithRetries', () => {
  const noSleep: StartOptions['sleep'] = () => Promise.resolve();

  test('when the first attempts fail, then each failure is logged at warn, what it opened is closed, and the next succeeds', async () => {
    const { log, entries } = capturedLog();
    const { attempt, events } = flakyAttempt(2);
    const failures: FailedAttempt[] = [];
    const slept: number[] = [];

    const start = startWithRetries(attempt, {
      log,
      random: () => 1,
      sleep: (ms) => {
        slept.push(ms);
        return Promise.resolve();
      },
      dependencyOf: () => 'kafka',
      onFailedAttempt: (failure) => failures.push(failure),
    });

    await expect(start.started).resolves.toBe('app');
    expect(events).toEqual(['open runtime 1', 'close runtime 1', 'open runtime 2', 'close runtime 2', 'open runtime 3', 'open module 3']);
    expect(slept).toEqual([250, 500]);
    expect(failures).toEqual([
      { attempt: 1, dependency: 'kafka', reason: 'Error: connect ECONNREFUSED', retryInMs: 250 },
      { attempt: 2, dependency: 'kafka', reason: 'Error: connect ECONNREFUSED', retryInMs: 500 },
    ]);
    const attemptLines = entries().filter((line) => line.msg === 'start-up attempt failed; retrying');
    expect(attemptLines.map((line) => [line.level, line.attempt, line.dependency])).toEqual([
      [40, 1, 'kafka'],
      [40, 2, 'kafka'],
    ]);
    expect(entries().filter((line) => line.level >= 50)).toEqual([]);
  });

  test('when started and then stopped, then what the successful attempt opened is closed in reverse order', async () => {
    const { attempt, events } = flakyAttempt(0);
    const start = startWithRetries(attempt, { log: capturedLog().log, sleep: noSleep });
    await start.started;

    await start.stop();

    expect(events).toEqual(['open runtime 1', 'open module 1', 'stop module 1', 'close runtime 1']);
  });

  test('when an attempt fails with a configuration error, then it is not retried', async () => {
    const { attempt, calls } = flakyAttempt(5, () => new ConfigError(['RESPONSE_SIGNING_KEYS: is required']));

    const start = startWithRetries(attempt, { log: capturedLog().log, sleep: noSleep });

    await expect(start.started).rejects.toBeInstanceOf(ConfigError);
    expect(calls()).toBe(1);
  });

  test('when isFatal accepts the error, then it is not retried either', async () => {
    const { attempt, events, calls } = flakyAttempt(5);

    const start = startWithRetries(attempt, { log: capturedLog().log, sleep: noSleep, isFatal: () => true });

    await expect(start.started).rejects.toThrow('connect ECONNREFUSED');
    expect(calls()).toBe(1);
    expect(events).toEqual(['open runtime 1', 'close runtime 1']);
  });

  test('when the deadline passes, then the start fails with one line naming the deadline and what it waited for', async () => {
    jest.useFakeTimers();
    try {
      const { attempt, calls } = flakyAttempt(
        Number.POSITIVE_INFINITY,
        () => new Error('connect ECONNREFUSED 127.0.0.1:9092\n    at stack'),
      );
      const start = startWithRetries(attempt, { log: capturedLog().log, deadlineMs: 10_000, dependencyOf: () => 'kafka', random: () => 0 });
      const outcome = start.started.catch((error: unknown) => error);

      await jest.advanceTimersByTimeAsync(10_000);

      const error = (await outcome) as Error;
      expect(error).toBeInstanceOf(StartDeadlineError);
      expect(error.message).toMatch(
        /^gave up starting: START_DEADLINE_MS \(10000 ms\) passed after \d+ attempt\(s\); still waiting for kafka: Error: connect ECONNREFUSED 127\.0\.0\.1:9092$/,
      );
      expect(calls()).toBeGreaterThan(3);
      const afterDeadline = calls();
      await jest.advanceTimersByTimeAsync(60_000);
      expect(calls()).toBe(afterDeadline);
    } finally {
      jest.useRealTimers();
    }
  });

  test('when there is no deadline, then it keeps trying, the pauses staying at the cap', async () => {
    const slept: number[] = [];
    const { attempt } = flakyAttempt(12);

    const start = startWithRetries(attempt, {
      log: capturedLog().log,
      random: () => 1,
      sleep: (ms) => {
        slept.push(ms);
        return Promise.resolve();
      },
    });

    await expect(start.started).resolves.toBe('app');
    expect(slept).toHaveLength(12);
    expect(slept.slice(-3)).toEqual([5000, 5000, 5000]);
  });

  test('when stopped while it waits between attempts, then no further attempt runs and started never settles', async () => {
    jest.useFakeTimers();
    try {
      const { attempt, calls } = flakyAttempt(Number.POSITIVE_INFINITY);
      const start = startWithRetries(attempt, { log: capturedLog().log, random: () => 1 });
      let settled = false;
      start.started.then(
        () => (settled = true),
        () => (settled = true),
      );
      await jest.advanceTimersByTimeAsync(0);
      expect(calls()).toBe(1);

      await start.stop();
      await jest.advanceTimersByTimeAsync(60_000);

      expect(calls()).toBe(1);
      expect(settled).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  test('when stopped while an attempt is under way, then what it opened is closed, also what it opens afterwards', async () => {
    const events: string[] = [];
    let release: () => void = () => undefined;
    const start = startWithRetries(
      async (scope) => {
        scope.closeOnStop(() => Promise.resolve(void events.push('close runtime')));
        await new Promise<void>((resolve) => (release = resolve));
        scope.closeOnStop(() => Promise.resolve(void events.push('stop module')));
        return 'app';
      },
      { log: capturedLog().log, sleep: noSleep },
    );
    await Promise.resolve();

    await start.stop();
    expect(events).toEqual(['close runtime']);
    release();
    await new Promise((resolve) => setImmediate(resolve));

    expect(events).toEqual(['close runtime', 'stop module']);
  });
});
