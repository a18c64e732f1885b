import { useFakeTimersFromZero } from '@rsd/testkit';
import { untilStopped } from './until-stopped';

describe('untilStopped', () => {
  useFakeTimersFromZero();

  test('when the process that started the command goes away (its parent changes to another), then it resolves', async () => {
    let parent = 4242;
    let stopped = false;
    void untilStopped(() => parent).then(() => (stopped = true));
    // Several of its checks (one each half second) while the parent is still there.
    await jest.advanceTimersByTimeAsync(2_000);
    expect(stopped).toBe(false);

    parent = 1;
    await jest.advanceTimersByTimeAsync(500);
    expect(stopped).toBe(true);
  });
});
