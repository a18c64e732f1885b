import { useFakeTimersFromZero } from '@rsd/testkit';
import { every } from './periodic-job';

const quiet = { warn: jest.fn() };
// On the fake clock below, a job's own wait is a timer the test advances, not time that passes.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('every', () => {
  useFakeTimersFromZero();

  test('when a run takes longer than the interval, then the ticks during it are skipped, never run beside it', async () => {
    let concurrent = 0;
    let most = 0;
    let runs = 0;
    const job = every(
      5,
      async () => {
        runs += 1;
        most = Math.max(most, ++concurrent);
        await sleep(30);
        concurrent -= 1;
      },
      { name: 'slow job', log: quiet, runAtStart: true },
    );
    // Runs start at 0, 35 and 70 (the first tick after each 30 ms run); the ticks in between are skipped.
    await jest.advanceTimersByTimeAsync(100);
    const stopping = job.stop();
    await jest.advanceTimersByTimeAsync(30);
    await stopping;

    expect(most).toBe(1);
    expect(runs).toBe(3);
  });

  test('when a run fails, then it is logged by name and the next tick runs all the same', async () => {
    const log = { warn: jest.fn() };
    let runs = 0;
    const job = every(
      5,
      () => {
        runs += 1;
        throw new Error('store away');
      },
      { name: 'the sampler', log },
    );
    await jest.advanceTimersByTimeAsync(40);
    await job.stop();

    expect(runs).toBe(8);
    expect(log.warn).toHaveBeenCalledTimes(8);
    expect(log.warn).toHaveBeenCalledWith({ err: expect.any(Error) }, 'the sampler failed; trying again in 5 ms');
  });

  test('when stopped during a run, then stop waits for it and nothing runs afterwards', async () => {
    let finished = 0;
    let runs = 0;
    const job = every(
      5,
      async () => {
        runs += 1;
        await sleep(20);
        finished += 1;
      },
      { name: 'job', log: quiet, runAtStart: true },
    );
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(19);
    expect(stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await stopping;
    expect(finished).toBe(1);

    // Whatever was left on the clock: no interval and no run after the stop.
    await jest.advanceTimersByTimeAsync(1_000);
    expect(jest.getTimerCount()).toBe(0);
    expect(runs).toBe(1);
  });
});
