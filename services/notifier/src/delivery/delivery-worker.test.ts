import { randomBytes } from 'node:crypto';
import { queueShardOf } from '@rsd/domain';
import { createMemoryViewStore } from '@rsd/embedded';
import type { PendingDelivery, StoredWebhook, WebhookStore } from '@rsd/ports';
import { aPendingDelivery, aStoredWebhook, capturedLog, eventually } from '@rsd/testkit';
import { secretSealer } from '../webhooks/secret-sealing';
import { startDeliveryWorker, type DeliveryWorker } from './delivery-worker';
import type { SendOutcome } from './send-webhook';

const sealer = secretSealer(randomBytes(32));
const NOW = new Date('2026-11-21T08:00:00.000Z');

/** A portfolio's test delivery: it carries no grant's data, so no view is needed to send it. */
function aPortfolioWebhook(account: string): StoredWebhook {
  return aStoredWebhook({ clientId: `account:${account}`, sealedSecret: sealer.seal(`whsec_${randomBytes(32).toString('base64')}`) });
}
const aTestDelivery = (webhook: StoredWebhook) =>
  aPendingDelivery(webhook, { eventType: 'webhook.test', body: JSON.stringify({ type: 'webhook.test', data: {} }) });

/** The queue as a store answers it, with what the worker wrote; `fencedOff` says whether a later fence owns a delivery. */
function aQueue(webhooks: readonly StoredWebhook[], deliveries: PendingDelivery[], fencedOff: (delivery: PendingDelivery) => boolean) {
  const written: { messageId: string; fence: number | undefined }[] = [];
  const asked: (readonly number[] | undefined)[] = [];
  const store = {
    due: (_now: Date, limit: number, shards?: readonly number[]) => {
      asked.push(shards);
      return Promise.resolve(
        deliveries.filter((delivery) => shards === undefined || shards.includes(queueShardOf(delivery.clientId))).slice(0, limit),
      );
    },
    findWebhook: (clientId: string, id: string) =>
      Promise.resolve(webhooks.find((webhook) => webhook.id === id && webhook.clientId === clientId)),
    recordAttempt: (delivery: PendingDelivery, _attempt: unknown, _outcome: unknown, _kept: number, fence?: number) => {
      written.push({ messageId: delivery.messageId, fence });
      deliveries.splice(deliveries.indexOf(delivery), 1);
      return Promise.resolve(!fencedOff(delivery));
    },
  } as unknown as WebhookStore;
  return { store, written, asked };
}

describe('delivery worker with replicas sharing the queue (decision 52)', () => {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
  });

  function start(store: WebhookStore, shards: () => ReadonlyMap<number, number>, send: () => Promise<SendOutcome>, outcomes: string[]) {
    const worker = startDeliveryWorker({
      store,
      views: createMemoryViewStore(),
      sealer,
      send,
      clock: { now: () => NOW },
      log: capturedLog().log,
      concurrency: 8,
      pollIntervalMs: 60_000,
      attemptsKept: 10,
      onAttempt: (outcome) => outcomes.push(outcome),
      shards,
    });
    workers.push(worker);
    return worker;
  }

  /** Webhooks of owners in two different shards, and a delivery to each. */
  function twoShards() {
    const mine = aPortfolioWebhook('acc_mine');
    let other = aPortfolioWebhook('acc_other0');
    for (let n = 1; queueShardOf(other.clientId) === queueShardOf(mine.clientId); n += 1) other = aPortfolioWebhook(`acc_other${n}`);
    return { mine, other, shard: queueShardOf(mine.clientId) };
  }

  it('when it holds some shards, then it sends only their deliveries and records each under its shard’s fence', async () => {
    const { mine, other, shard } = twoShards();
    const [ours, theirs] = [aTestDelivery(mine), aTestDelivery(other)];
    const queue = aQueue([mine, other], [ours, theirs], () => false);
    const sent: string[] = [];
    const outcomes: string[] = [];

    start(
      queue.store,
      () => new Map([[shard, 7]]),
      () => {
        sent.push('sent');
        return Promise.resolve({ outcome: 'answered', status: 204 });
      },
      outcomes,
    );

    await eventually(() => expect(queue.written).toHaveLength(1));
    expect(queue.asked[0]).toEqual([shard]);
    expect(queue.written).toEqual([{ messageId: ours.messageId, fence: 7 }]);
    expect(sent).toHaveLength(1);
    expect(outcomes).toEqual(['succeeded']);
  });

  it('when the store says a later fence owns the delivery, then the outcome is counted as fenced, not as delivered', async () => {
    const { mine, shard } = twoShards();
    const queue = aQueue([mine], [aTestDelivery(mine)], () => true);
    const outcomes: string[] = [];

    start(
      queue.store,
      () => new Map([[shard, 1]]),
      () => Promise.resolve({ outcome: 'answered', status: 204 }),
      outcomes,
    );

    await eventually(() => expect(outcomes).toHaveLength(1));
    expect(outcomes).toEqual(['fenced']);
  });

  it('when its lease goes while an attempt is under way, then drain waits for that attempt to be recorded', async () => {
    const { mine, shard } = twoShards();
    const queue = aQueue([mine], [aTestDelivery(mine)], () => false);
    let answer: ((outcome: SendOutcome) => void) | undefined;
    const worker = start(
      queue.store,
      () => new Map([[shard, 2]]),
      () => new Promise<SendOutcome>((resolve) => (answer = resolve)),
      [],
    );
    // The attempt is under way: its POST is waiting for an answer.
    await eventually(() => expect(answer).toBeDefined());

    let drained = false;
    const draining = worker.drain(shard).then(() => (drained = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(false);
    answer?.({ outcome: 'answered', status: 204 });
    await draining;
    expect(queue.written).toHaveLength(1);
  });

  it('when an attempt finishes while the queue is being read, then the read’s stale copy of it is not sent again', async () => {
    const webhook = aPortfolioWebhook('acc_alone');
    const delivery = aTestDelivery(webhook);
    let staleRead: ((deliveries: PendingDelivery[]) => void) | undefined;
    let reads = 0;
    const recorded: string[] = [];
    const store = {
      // The first read finds the delivery; the second starts before its attempt is recorded and answers after.
      due: () => {
        reads += 1;
        return reads === 1 ? Promise.resolve([delivery]) : new Promise<PendingDelivery[]>((resolve) => (staleRead = resolve));
      },
      findWebhook: () => Promise.resolve(webhook),
      recordAttempt: () => {
        recorded.push(delivery.messageId);
        return Promise.resolve(true);
      },
    } as unknown as WebhookStore;
    let answer: ((outcome: SendOutcome) => void) | undefined;
    let sends = 0;
    const worker = start(
      store,
      () => new Map([[queueShardOf(webhook.clientId), 1]]),
      () => {
        sends += 1;
        return sends === 1
          ? new Promise<SendOutcome>((resolve) => (answer = resolve))
          : Promise.resolve<SendOutcome>({ outcome: 'answered', status: 204 });
      },
      [],
    );
    await eventually(() => expect(answer).toBeDefined());

    worker.nudge();
    await eventually(() => expect(staleRead).toBeDefined());
    answer?.({ outcome: 'answered', status: 204 });
    await eventually(() => expect(recorded).toHaveLength(1));
    staleRead?.([delivery]);
    await worker.stop();

    expect(sends).toBe(1);
  });

  it('when it holds no shard, then it reads nothing from the queue', async () => {
    const { mine } = twoShards();
    const queue = aQueue([mine], [aTestDelivery(mine)], () => false);
    const worker = start(
      queue.store,
      () => new Map(),
      () => Promise.resolve({ outcome: 'answered', status: 204 }),
      [],
    );

    worker.nudge();
    await worker.stop();

    expect(queue.asked).toEqual([]);
  });
});
