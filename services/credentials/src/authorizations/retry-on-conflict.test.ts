import { ApiError } from '@rsd/platform';
import { LOST_TO_A_CONCURRENT_CHANGE, retryOnConflict } from './retry-on-conflict';

const log = { warn: jest.fn() } as unknown as Parameters<typeof retryOnConflict>[1]['log'];

describe('retryOnConflict', () => {
  test('when a write loses to a concurrent change, then the change is read and decided again until it wins', async () => {
    let attempts = 0;
    const outcome = await retryOnConflict(() => Promise.resolve(++attempts < 3 ? LOST_TO_A_CONCURRENT_CHANGE : 'written'), {
      log,
      what: 'revoke',
      context: {},
    });

    expect([outcome, attempts]).toEqual(['written', 3]);
  });

  test('when it keeps losing, then after five attempts it answers 503 and says so in the log', async () => {
    let attempts = 0;
    const warn = jest.fn();
    const failing = retryOnConflict(
      () => {
        attempts += 1;
        return Promise.resolve(LOST_TO_A_CONCURRENT_CHANGE);
      },
      { log: { warn } as unknown as typeof log, what: 'rotation', context: { clientId: 'rs_x' } },
    );

    await expect(failing).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    await expect(failing).rejects.toBeInstanceOf(ApiError);
    expect(attempts).toBe(5);
    expect(warn).toHaveBeenCalledWith({ clientId: 'rs_x', attempts: 5 }, 'rotation kept losing to concurrent changes');
  });
});
