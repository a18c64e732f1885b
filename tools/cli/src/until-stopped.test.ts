import { untilStopped } from './until-stopped';

describe('untilStopped', () => {
  test('when the process that started the command goes away (its parent changes to another), then it resolves', async () => {
    let parent = 4242;
    let stopped = false;
    void untilStopped(() => parent).then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(stopped).toBe(false);

    parent = 1;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(stopped).toBe(true);
  });
});
