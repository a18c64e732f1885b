import { MongoNetworkError } from 'mongodb';
import { UnavailableError } from '@rsd/platform';
import { reportingOutages } from './outages';

describe('reportingOutages', () => {
  const store = {
    label: 'kept',
    async find(fail: Error | undefined): Promise<string> {
      if (fail) throw fail;
      return Promise.resolve(this.label);
    },
  };

  test('when the driver cannot reach the server, then the method rejects with the port’s UnavailableError, the cause kept', async () => {
    const outage = new MongoNetworkError('connection refused');

    const rejection = (await reportingOutages(store)
      .find(outage)
      .catch((error: unknown) => error)) as UnavailableError;

    expect(rejection).toBeInstanceOf(UnavailableError);
    expect(rejection.cause).toBe(outage);
  });

  test('when a method fails for another reason, then the error passes through unchanged; answers pass through too', async () => {
    const bug = new Error('duplicate key');

    await expect(reportingOutages(store).find(bug)).rejects.toBe(bug);
    await expect(reportingOutages(store).find(undefined)).resolves.toBe('kept');
  });
});
