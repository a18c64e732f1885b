import { every } from './periodic-job';

const quiet = { warn: jest.fn() };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('every', () => {
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
    await sleep(100);
    await job.stop();

    expect(most).toBe(1);
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(runs).toBeLessThanOrEqual(4);
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
    await sleep(40);
    await job.stop();

    expect(runs).toBeGreaterThanOrEqual(2);
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
    await job.stop();
    const after = runs;
    await sleep(30);

    expect(finished).toBe(runs);
    expect(runs).toBe(after);
  });
});
