import { context, type Tracer } from '@opentelemetry/api';
import { parentContextOf } from '@rsd/consumers';
import type { WebhookDelivery } from '@rsd/contracts';
import {
  credentialView,
  deliverableWithoutGrant,
  deliveryAllowList,
  grantOfQueuedDelivery,
  nextRetry,
  previousSecretAt,
  queueShardOf,
  stillDeliverable,
} from '@rsd/domain';
import { webhookHeaders, type Logger } from '@rsd/platform';
import type { Clock, PendingDelivery, StoredWebhook, ViewStore, WebhookStore } from '@rsd/ports';
import type { SecretSealer } from '../webhooks/secret-sealing';
import type { OutgoingWebhook, SendOutcome } from './send-webhook';
import { tracedAttempt } from './traced-attempt';

export interface DeliveryWorkerDeps {
  store: WebhookStore;
  views: ViewStore;
  sealer: SecretSealer;
  send: (webhook: OutgoingWebhook) => Promise<SendOutcome>;
  clock: Clock;
  log: Logger;
  concurrency: number;
  pollIntervalMs: number;
  attemptsKept: number;
  /** Told of each attempt's outcome (the deliveries metric). */
  onAttempt?: (outcome: 'succeeded' | 'failed' | 'gave-up' | 'dropped' | 'skipped' | 'fenced') => void;
  /**
   * Decision 52, where replicas share the queue: the shards this replica may work now, each with the
   * fence of its lease. Absent: this process works the whole queue (the embedded runtime).
   */
  shards?: () => ReadonlyMap<number, number>;
  /** A delivery a lost replica may have sent already is sent again after a takeover (an upper bound of the repeats). */
  onResumed?: () => void;
  random?: () => number;
  /** When tracing is on: each attempt is a span in the trace of the event it was planned from (decision 39). */
  tracer?: Tracer | undefined;
  /** Told of a webhook it disabled after its deliveries failed for 24 h (the audit trail records it, decision 54). */
  onDisabled?: (webhook: StoredWebhook, at: Date) => Promise<void>;
}

export interface DeliveryWorker {
  /** Something was queued: look at the queue now rather than at the next poll. */
  nudge(): void;
  /** Resolves once the attempts under way in `shard` are recorded (its lease is about to go). */
  drain(shard: number): Promise<void>;
  /**
   * The shard was taken over from a lost replica at `at`: of its deliveries due by then, the first
   * `concurrency` attempted here may repeat what that replica had under way, and are counted (`onResumed`).
   */
  tookOver(shard: number, at: Date): void;
  stop(): Promise<void>;
}

/**
 * Takes due deliveries from the queue and attempts them, at most `concurrency` at a time, each one
 * once at a time, in the store's turns between owners (decision 50): the attempts in flight are the
 * earliest of their owners, so a slot that frees goes to the next owner whose turn it is, and one
 * owner's failing endpoint delays another's delivery by at most the attempts already under way. The queue is the truth: a delivery leaves it only when it succeeded or was given
 * up, so a restart resumes every pending one, with the same `webhook-id`, and none is sent twice
 * except as a retry. Where replicas share the store (decision 52), each works only the shards it holds
 * the lease of, and records each outcome under that lease's fence.
 */
export function startDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const { store, clock, log } = deps;
  const random = deps.random ?? Math.random;
  const inFlight = new Map<string, { shard: number; attempt: Promise<void> }>();
  /** Per shard taken over: deliveries due by then, and how many more of them may repeat a lost replica's. */
  const resumable = new Map<number, { dueBy: number; left: number }>();
  /**
   * Attempts that finished while the queue was being read: the read may predate their record, so
   * they are not taken from it again (a second send of a delivered message, with one replica alone).
   */
  const finishedDuringRead = new Set<string>();
  let reading = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let looking: Promise<void> | undefined;
  let lookAgain = false;

  function schedule(delayMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void look(), delayMs);
  }

  /** One look at the queue; a nudge during it makes another right after. */
  function look(): Promise<void> {
    if (looking) {
      lookAgain = true;
      return looking;
    }
    looking = (async () => {
      do {
        lookAgain = false;
        const room = deps.concurrency - inFlight.size;
        if (room <= 0 || stopped) break;
        const owned = deps.shards?.();
        if (owned?.size === 0) break;
        let due: PendingDelivery[];
        finishedDuringRead.clear();
        reading = true;
        try {
          due = await store.due(clock.now(), room + inFlight.size, owned ? [...owned.keys()] : undefined);
        } catch (error) {
          log.warn({ err: error }, 'could not read the webhook queue; trying again');
          break;
        } finally {
          reading = false;
        }
        // The shards as held now: one given up while the queue was read is no longer worked here.
        const held = deps.shards?.();
        for (const delivery of due) {
          if (inFlight.size >= deps.concurrency) break;
          if (inFlight.has(delivery.messageId) || finishedDuringRead.has(delivery.messageId)) continue;
          const shard = queueShardOf(delivery.clientId);
          const fence = held?.get(shard);
          if (held && fence === undefined) continue;
          countIfResumed(shard, delivery);
          const attempt = attemptInItsTrace(delivery, fence).then(
            () => {
              settled(delivery.messageId);
              // A slot is free: what waits behind it need not wait for the next poll.
              schedule(0);
            },
            (error: unknown) => {
              // The store could not record it: the delivery stays due, and is tried again at the next poll, not at once.
              settled(delivery.messageId);
              log.error({ err: error, messageId: delivery.messageId }, 'webhook attempt could not be recorded');
            },
          );
          inFlight.set(delivery.messageId, { shard, attempt });
        }
      } while (lookAgain && !stopped);
    })().finally(() => {
      looking = undefined;
      schedule(deps.pollIntervalMs);
    });
    return looking;
  }

  function settled(messageId: string): void {
    inFlight.delete(messageId);
    if (reading) finishedDuringRead.add(messageId);
  }

  function countIfResumed(shard: number, delivery: PendingDelivery): void {
    const taken = resumable.get(shard);
    if (!taken || Date.parse(delivery.dueAt) > taken.dueBy) return;
    deps.onResumed?.();
    taken.left -= 1;
    if (taken.left <= 0) resumable.delete(shard);
  }

  /** The store's calls and the POST of an attempt, in the context of the event it was planned from. */
  function attemptInItsTrace(delivery: PendingDelivery, fence: number | undefined): Promise<void> {
    return deps.tracer ? context.with(parentContextOf(delivery), () => attemptOnce(delivery, fence)) : attemptOnce(delivery, fence);
  }

  /** Whether the shard's lease is still this replica's under the same fence: if not, nothing more is sent. */
  function stillHeld(delivery: PendingDelivery, fence: number | undefined): boolean {
    return fence === undefined || deps.shards?.().get(queueShardOf(delivery.clientId)) === fence;
  }

  /** Records under the fence; a write the shard's new holder fenced off is counted, not an error. */
  async function recorded(written: Promise<boolean>, fence: number | undefined): Promise<boolean> {
    if ((await written) || fence === undefined) return true;
    deps.onAttempt?.('fenced');
    return false;
  }

  async function attemptOnce(delivery: PendingDelivery, fence: number | undefined): Promise<void> {
    const webhook = await store.findWebhook(delivery.clientId, delivery.webhookId);
    // The grant whose data it carries: none for a portfolio's test delivery, which carries nothing of an organization's.
    const grant = grantOfQueuedDelivery(delivery);
    const credential = grant === undefined ? undefined : await deps.views.get(credentialView, grant);
    const now = clock.now();
    const deliverable =
      credential === undefined
        ? grant === undefined && deliverableWithoutGrant(delivery.eventType)
        : stillDeliverable(delivery.eventType, credential, now);
    // Deleted, disabled, or an authorization ended since: a score must not reach it (decision 27). Nothing was sent, so nothing is logged.
    if (!webhook || webhook.status !== 'active' || !deliverable) {
      if (await recorded(store.discard(delivery, fence), fence)) deps.onAttempt?.('dropped');
      return;
    }
    // The lease went while the delivery was being looked at: its new holder sends it.
    if (!stillHeld(delivery, fence)) return;
    const timestamp = Math.floor(now.getTime() / 1000);
    const secret = openSecret(webhook.sealedSecret, webhook.id);
    // During a rotation's overlap (decision 45), signed with the previous secret too.
    const sealedPrevious = previousSecretAt(webhook, now);
    const previous = sealedPrevious === undefined ? undefined : openSecret(sealedPrevious, webhook.id);
    const send = () =>
      (secret === undefined || (sealedPrevious !== undefined && previous === undefined)
        ? Promise.resolve<SendOutcome>({ outcome: 'failed', failure: 'connection_failed', reason: 'the secret could not be opened' })
        : deps.send({
            url: webhook.url,
            headers: webhookHeaders({
              id: delivery.messageId,
              timestamp,
              body: delivery.body,
              secret,
              ...(previous === undefined ? {} : { alsoSignedWith: [previous] }),
            }),
            body: delivery.body,
            // The grant's allow list as it is now: the connection is made only inside it.
            allowedCidrs: deliveryAllowList(delivery.clientId, credential),
          })
      ).catch((error: unknown): SendOutcome => ({
        outcome: 'failed',
        failure: 'connection_failed',
        reason: error instanceof Error ? error.name : 'error',
      }));
    const outcome = await (deps.tracer ? tracedAttempt(deps.tracer, webhook.url, delivery.attempts, send) : send());
    const answeredAt = clock.now();
    if (outcome.outcome === 'skipped') {
      // Skipped for good: listed with why, never retried, and no failure towards disabling the webhook.
      const written = store.recordAttempt(
        delivery,
        { ...attemptRecord(delivery, now, null, 'skipped', null), skipped: outcome.skipped },
        { next: 'done' },
        deps.attemptsKept,
        fence,
      );
      if (!(await recorded(written, fence))) return;
      deps.onAttempt?.('skipped');
      log.info(
        { messageId: delivery.messageId, webhookId: webhook.id, skipped: outcome.skipped },
        "webhook delivery skipped: the receiver's address is outside the grant's allow list",
      );
      return;
    }
    const succeeded = outcome.outcome === 'answered' && outcome.status >= 200 && outcome.status < 300;
    if (succeeded) {
      const written = store.recordAttempt(
        delivery,
        attemptRecord(delivery, now, outcome.status, 'succeeded', null),
        { next: 'done' },
        deps.attemptsKept,
        fence,
      );
      if (await recorded(written, fence)) deps.onAttempt?.('succeeded');
      return;
    }
    const failure = outcome.outcome === 'answered' ? 'response_status' : outcome.failure;
    const record = attemptRecord(delivery, now, outcome.outcome === 'answered' ? outcome.status : null, 'failed', failure);
    const firstAttemptAt = new Date(delivery.firstAttemptAt ?? now.toISOString());
    const retry = nextRetry({ firstAttemptAt, attempt: delivery.attempts + 1, failedAt: answeredAt }, random);
    if (retry.outcome === 'retry') {
      const written = store.recordAttempt(delivery, record, { next: 'retry', dueAt: retry.at.toISOString() }, deps.attemptsKept, fence);
      if (!(await recorded(written, fence))) return;
      deps.onAttempt?.('failed');
      log.info(
        { messageId: delivery.messageId, webhookId: webhook.id, attempt: delivery.attempts + 1, failure, nextAttemptAt: retry.at },
        'webhook delivery failed; will retry',
      );
      return;
    }
    if (!(await recorded(store.recordAttempt(delivery, record, { next: 'done' }, deps.attemptsKept, fence), fence))) return;
    await store.disableWebhook(webhook.id, answeredAt.toISOString());
    await deps.onDisabled?.(webhook, answeredAt);
    deps.onAttempt?.('gave-up');
    log.warn(
      { messageId: delivery.messageId, webhookId: webhook.id, attempts: delivery.attempts + 1 },
      'webhook failing for 24 h: subscription disabled',
    );
  }

  /**
   * A secret sealed under another key (WEBHOOK_SECRET_KEY changed) cannot sign: the attempt fails and
   * is retried on the schedule like any other, and the operator is told, rather than tried at once forever.
   */
  function openSecret(sealed: string, webhookId: string): string | undefined {
    try {
      return deps.sealer.open(sealed);
    } catch {
      log.error({ webhookId }, 'cannot open the webhook secret: was WEBHOOK_SECRET_KEY changed?');
      return undefined;
    }
  }

  schedule(0);
  return {
    nudge: () => void look(),
    async drain(shard) {
      await Promise.all([...inFlight.values()].filter((entry) => entry.shard === shard).map(({ attempt }) => attempt));
    },
    tookOver(shard, at) {
      resumable.set(shard, { dueBy: at.getTime(), left: deps.concurrency });
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await looking;
      // An attempt under way finishes and is recorded: cut short, it would be sent again after the restart anyway.
      await Promise.all([...inFlight.values()].map(({ attempt }) => attempt));
    },
  };
}

function attemptRecord(
  delivery: PendingDelivery,
  attemptedAt: Date,
  responseCode: number | null,
  status: 'succeeded' | 'failed' | 'skipped',
  failure: WebhookDelivery['failure'],
): WebhookDelivery {
  return {
    messageId: delivery.messageId,
    eventType: delivery.eventType,
    attempt: delivery.attempts + 1,
    status,
    responseCode,
    failure,
    scheduledAt: delivery.dueAt,
    attemptedAt: attemptedAt.toISOString(),
  };
}
