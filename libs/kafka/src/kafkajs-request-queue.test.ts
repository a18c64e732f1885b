// patches/kafkajs+2.2.4.patch, applied by the root package's postinstall (patch-package): an idle
// request queue of kafkajs schedules no check of its pending requests. Unpatched, every answered
// request left a timer of -Date.now() ms (Node: TimeoutNegativeWarning, run after 1 ms) that
// rescheduled itself forever, about 1,000 wake-ups a second per broker connection of an idle service.

interface RequestQueue {
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  maybeThrottle(clientSideThrottleTime: number): void;
}

const RequestQueue = jest.requireActual<new (options: object) => RequestQueue>('kafkajs/src/network/requestQueue');

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function aQueue(): RequestQueue {
  return new RequestQueue({ maxInFlightRequests: null, requestTimeout: 30_000, clientId: 'test', broker: 'broker:9092', logger: quiet });
}

describe('kafkajs request queue (patched)', () => {
  it('when nothing is pending and nothing throttled, then a check (as after every answer) schedules no further check', () => {
    const queue = aQueue();

    queue.checkPendingRequests();

    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it('when the broker throttles the client, then a check is still scheduled for the end of the throttle', () => {
    const queue = aQueue();
    queue.maybeThrottle(60_000);

    queue.checkPendingRequests();

    expect(queue.throttleCheckTimeoutId).not.toBeNull();
    clearTimeout(queue.throttleCheckTimeoutId ?? undefined);
  });
});
