import { addProductCommands } from './product-commands';
import { runCli } from './cli';

/**
 * The CLI builds its whole program, help texts included, at every start: whatever it loads then, every
 * command pays for. The schema library (zod, through @rsd/contracts' schemas) is loaded only by the
 * commands that use it; the event names the help shows come from `@rsd/contracts/event-names`.
 */
jest.mock('zod', () => {
  throw new Error('zod was loaded by the CLI at start-up');
});

describe('rsd start-up', () => {
  test('when the program is built and its help printed, then no schema library is loaded', async () => {
    let stdout = '';
    const io = { env: {}, stdout: (text: string) => (stdout += text), stderr: () => undefined, untilStopped: () => Promise.resolve() };

    const code = await runCli(['alert-webhooks', 'create', '--help'], io, { productCommands: addProductCommands });

    expect(code).toBe(0);
    expect(stdout).toContain('access_review.completed');
  });
});
