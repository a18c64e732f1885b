import {
  KafkaJSConnectionError,
  KafkaJSGroupCoordinatorNotFound,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  type Kafka,
} from 'kafkajs';
import pino from 'pino';
import { KafkaSubscription, restartDelayMs } from './kafka-subscription';
import { isPassingKafkaError, type TopicAdmin } from './topic-admin';

/** kafkajs's types give this error no message argument, its code takes one (kafkajs/src/errors.js). */
const coordinatorNotFound = () =>
  new (KafkaJSGroupCoordinatorNotFound as unknown as new (message: string) => Error)('Failed to find group coordinator');

type Listener = (event: { payload: Record<string, unknown> }) => void;

/** A kafkajs consumer that records its calls and lets the test emit its instrumentation events: no broker. */
function fakeConsumer() {
  const listeners = new Map<string, Listener>();
  const calls: string[] = [];
  const consumer = {
    events: { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' },
    on: (event: string, listener: Listener) => listeners.set(event, listener),
    connect: () => Promise.resolve(void calls.push('connect')),
    subscribe: () => Promise.resolve(void calls.push('subscribe')),
    run: () => Promise.resolve(void calls.push('run')),
    disconnect: () => Promise.resolve(void calls.push('disconnect')),
    seek: () => undefined,
  };
  const emit = (event: string, payload: Record<string, unknown>) => listeners.get(event)?.({ payload });
  return { consumer, calls, emit, runs: () => calls.filter((call) => call === 'run').length };
}

function subscriptionOn(consumer: ReturnType<typeof fakeConsumer>['consumer']): KafkaSubscription {
  const topics = {
    committedOffsets: () => Promise.resolve(new Map()),
    partitionOffsets: () => Promise.resolve([]),
    deleteGroup: () => Promise.resolve(),
  } as unknown as TopicAdmin;
  return new KafkaSubscription(
    {
      kafka: { consumer: () => consumer } as unknown as Kafka,
      topics,
      consumerConfig: {},
      log: pino({ level: 'silent' }),
      onClose: () => undefined,
    },
    { groupId: 'g', topics: ['t'], fromBeginning: true, handle: () => Promise.resolve() },
    [],
    new Map(),
  );
}

describe('a Kafka subscription whose consumer crashes', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  async function aStartedSubscription() {
    const fake = fakeConsumer();
    const subscription = subscriptionOn(fake.consumer);
    await subscription.start();
    return { fake, subscription };
  }

  test('when kafkajs gives up on an error it does not retry (no group coordinator found), then the subscription restarts its consumer', async () => {
    const { fake, subscription } = await aStartedSubscription();
    expect(fake.runs()).toBe(1);

    fake.emit('consumer.crash', { error: coordinatorNotFound(), restart: false });
    await jest.advanceTimersByTimeAsync(restartDelayMs(1, 5_000, () => 1));

    expect(fake.runs()).toBe(2);
    expect(fake.calls.slice(-3)).toEqual(['connect', 'subscribe', 'run']);
    await subscription.close();
  });

  test('when its restart fails too, then it tries again with a longer pause until one succeeds', async () => {
    const { fake, subscription } = await aStartedSubscription();
    let refusals = 2;
    fake.consumer.connect = () =>
      refusals-- > 0 ? Promise.reject(new KafkaJSConnectionError('Connection error')) : Promise.resolve(undefined);

    fake.emit('consumer.crash', { error: new KafkaJSNonRetriableError('something else'), restart: false });
    await jest.advanceTimersByTimeAsync(
      restartDelayMs(1, 5_000, () => 1) + restartDelayMs(2, 5_000, () => 1) + restartDelayMs(3, 5_000, () => 1),
    );

    expect(refusals).toBe(-1);
    expect(fake.runs()).toBe(2);
    await subscription.close();
  });

  test('when kafkajs restarts the consumer itself, then the subscription does not', async () => {
    const { fake, subscription } = await aStartedSubscription();

    fake.emit('consumer.crash', { error: new KafkaJSConnectionError('Connection error'), restart: true });
    await jest.advanceTimersByTimeAsync(10_000);

    expect(fake.runs()).toBe(1);
    await subscription.close();
  });

  test('when the subscription is closed before the restart is due, then no restart happens', async () => {
    const { fake, subscription } = await aStartedSubscription();

    fake.emit('consumer.crash', { error: coordinatorNotFound(), restart: false });
    await subscription.close();
    await jest.advanceTimersByTimeAsync(10_000);

    expect(fake.runs()).toBe(1);
    expect(fake.calls.at(-1)).toBe('disconnect');
  });
});

describe('a Kafka subscription starting on a topic created a moment ago', () => {
  test('when the broker does not host the topic yet, then subscribing is tried again until it does', async () => {
    const fake = fakeConsumer();
    const notHostedYet = new (KafkaJSProtocolError as unknown as new (e: object) => Error)({
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
      code: 3,
      retriable: true,
      message: 'This server does not host this topic-partition',
    });
    let refusals = 2;
    fake.consumer.subscribe = () => (refusals-- > 0 ? Promise.reject(notHostedYet) : Promise.resolve(undefined));
    const subscription = subscriptionOn(fake.consumer);

    await subscription.start();

    expect(refusals).toBe(-1);
    expect(fake.runs()).toBe(1);
    expect(fake.calls.filter((call) => call === 'disconnect')).toHaveLength(2);
    await subscription.close();
  });

  test('when subscribing fails for a reason that does not pass, then the start fails at once', async () => {
    const fake = fakeConsumer();
    fake.consumer.subscribe = () => Promise.reject(new KafkaJSNonRetriableError('Invalid topic'));
    const subscription = subscriptionOn(fake.consumer);

    await expect(subscription.start()).rejects.toThrow('Invalid topic');
    expect(fake.runs()).toBe(0);
  });
});

/** Lets every promise already settled run its callbacks. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('a Kafka subscription committing what it handled', () => {
  test('when records are handled while a commit is in flight, then the next commit carries only the latest position, and close commits the rest before leaving', async () => {
    const fake = fakeConsumer();
    let eachMessage: ((payload: unknown) => Promise<void>) | undefined;
    const commits: string[][] = [];
    const inFlight: (() => void)[] = [];
    Object.assign(fake.consumer, {
      run: (config: { eachMessage: (payload: unknown) => Promise<void> }) => {
        eachMessage = config.eachMessage;
        return Promise.resolve();
      },
      commitOffsets: (offsets: { partition: number; offset: string }[]) => {
        commits.push(offsets.map(({ partition, offset }) => `${partition}@${offset}`));
        fake.calls.push('commit');
        return new Promise<void>((resolve) => inFlight.push(resolve));
      },
    });
    const subscription = subscriptionOn(fake.consumer);
    await subscription.start();
    const deliver = (partition: number, offset: number) =>
      eachMessage!({
        topic: 't',
        partition,
        message: { offset: String(offset), key: null, value: Buffer.from('{}') },
        heartbeat: () => Promise.resolve(),
      });

    await deliver(0, 0);
    await deliver(0, 1);
    await deliver(1, 7);
    await deliver(0, 2);
    expect(commits).toEqual([['0@1']]);
    inFlight.shift()!();
    await settle();
    expect(commits).toEqual([['0@1'], ['0@3', '1@8']]);

    await deliver(1, 8);
    const closed = subscription.close();
    inFlight.shift()!();
    await settle();
    inFlight.shift()!();
    await closed;

    expect(commits).toEqual([['0@1'], ['0@3', '1@8'], ['1@9']]);
    expect(fake.calls.slice(-2)).toEqual(['commit', 'disconnect']);
  });
});

describe('restartDelayMs', () => {
  test('when restarts follow one another, then the pause doubles from 500 ms to at most 5 s, jittered down to half', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => restartDelayMs(n, 5_000, () => 1))).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    expect(restartDelayMs(9, 5_000, () => 0)).toBe(2500);
  });

  test('when the follower tracks its freshness, then the pause is at most a second', () => {
    expect([1, 2, 3].map((n) => restartDelayMs(n, 1_000, () => 1))).toEqual([500, 1000, 1000]);
  });
});

describe('isPassingKafkaError', () => {
  test.each([
    ['a retriable broker answer', new KafkaJSConnectionError('Connection error: connect ECONNREFUSED')],
    ['no group coordinator found yet', coordinatorNotFound()],
    [
      'retries exhausted',
      new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('Connection timeout'), { retryCount: 5, retryTime: 1000 }),
    ],
    ['a wrapped connection failure', new Error('appending to Kafka failed', { cause: new KafkaJSConnectionError('Closed connection') })],
  ])('when the error is %s, then it passes by itself', (_name, error) => {
    expect(isPassingKafkaError(error)).toBe(true);
  });

  test.each([
    ['a non-retriable kafkajs error', new KafkaJSNonRetriableError('Invalid topic')],
    ['not a kafkajs error', new Error('boom')],
    ['not an error', 'boom'],
  ])('when the error is %s, then it does not', (_name, error) => {
    expect(isPassingKafkaError(error)).toBe(false);
  });
});
