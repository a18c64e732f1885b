import type { WebhookDelivery, WebhookPayloadType, WebhookStatus } from '@rsd/contracts';
import type { KeyCutOff, WebhookState } from '@rsd/domain';

/** A webhook subscription as the notifier keeps it (decisions 26 and 45). */
export interface StoredWebhook extends WebhookState {
  /** `wh_…` */
  id: string;
  /** The owner's key (`webhookOwnerKey`): for a grant, its Client ID, under which its webhooks always were kept. */
  clientId: string;
  /** The authorization's organization, whose score events reach this subscription. */
  organizationId: string;
  createdAt: string;
}

/** A delivery as it was queued, found again by its `webhook-id` for a redelivery (decision 45). */
export interface QueuedMessage {
  /** `msg_…`, sent as `webhook-id`. */
  messageId: string;
  /** Unique per source event, subscription and type: planning the same event twice adds nothing. */
  key: string;
  webhookId: string;
  clientId: string;
  eventType: WebhookPayloadType;
  /** The JSON body exactly as signed and sent. */
  body: string;
  /**
   * The grant whose data it carries: a grant's own webhook's, that grant; a portfolio's, the grant it
   * names. Its allow list bounds where the delivery may go. Absent for a delivery that carries no
   * grant's data (an organization's alert, a portfolio's test) and for one queued before it was kept.
   */
  grantClientId?: string | undefined;
}

/** A message owed to a subscription: the same `messageId` and body on every attempt (Standard Webhooks). */
export interface PendingDelivery extends QueuedMessage {
  /** Attempts made so far (0 before the first). */
  attempts: number;
  /** When the first attempt was made; the 24 h of retries count from it. Null before it. */
  firstAttemptAt: string | null;
  /** When the next attempt is due. */
  dueAt: string;
  /**
   * The trace context the delivery was planned in (W3C `traceparent` and `tracestate`: the notifier's span
   * of the event, in the event's trace; decision 39), so that each attempt, however much later, is a span of that trace.
   */
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

export type AddWebhookOutcome = 'added' | 'limit-reached';

/** What happened to a delivery after an attempt. */
export type AttemptOutcome =
  /** Delivered, or given up for good: it leaves the queue. */
  | { next: 'done' }
  /** Tried again at `dueAt`. */
  | { next: 'retry'; dueAt: string };

/**
 * The notifier's store: subscriptions, the queue of deliveries owed, and the log of attempts.
 * Implemented once in the embedded database and once on MongoDB, with one contract suite.
 */
export interface WebhookStore {
  /** Adds the subscription unless its Client ID already has `limit`: the count and the insert are one step. */
  addWebhook(webhook: StoredWebhook, limit: number): Promise<AddWebhookOutcome>;
  /** Oldest first. */
  listWebhooks(clientId: string): Promise<StoredWebhook[]>;
  findWebhook(clientId: string, id: string): Promise<StoredWebhook | undefined>;
  /** Removes the subscription, its pending deliveries and its attempts; false when there was none. */
  deleteWebhook(clientId: string, id: string): Promise<boolean>;
  /** Active subscriptions of every authorization of an organization (a score event concerns them all). */
  activeWebhooksOfOrganization(organizationId: string): Promise<StoredWebhook[]>;
  /** Active subscriptions of one authorization (an authorization event concerns them). */
  activeWebhooksOfClient(clientId: string): Promise<StoredWebhook[]>;
  /** Marks an active one disabled after failures (`disabledReason: delivery_failures`) and drops its pending deliveries. */
  disableWebhook(id: string, at: string): Promise<void>;
  /**
   * Decision 50: disables, for `cutOff.reason` as of `cutOff.at`, every webhook of the cut-off's key
   * owner (those kept under it, and those its keys made for another owner: `keyOwner`) that the domain's
   * `cutOffDisables` says it concerns, and drops their pending deliveries, each webhook in one step
   * against concurrent changes. Resolves with how many of the key owner's webhooks are disabled for
   * this reason as of this time: applied again (a replayed event), it changes nothing and counts the same.
   */
  disableWebhooksOfKeys(cutOff: KeyCutOff): Promise<number>;
  /**
   * Writes the changed subscription (same id and owner; its address, events, status, conditions or
   * secrets changed) if its stored status is still `expectedStatus`: a change made from a copy read
   * before the delivery worker disabled it does not bring it back. One that is no longer active loses
   * its pending deliveries. False when there was none, or its status had changed.
   */
  updateWebhook(webhook: StoredWebhook, expectedStatus: WebhookStatus): Promise<boolean>;
  /**
   * The delivery with this `webhook-id` queued for this subscription in the last 7 days (delivered,
   * given up or pending), with its body as it was sent.
   */
  findMessage(webhookId: string, messageId: string): Promise<QueuedMessage | undefined>;

  /**
   * Queues each delivery unless one with the same `key` was queued in the last 7 days (delivered or
   * not): replaying the events after the last saved position queues nothing twice. Resolves once the
   * deliveries are queued; they are durable no later than anything the caller writes after it.
   */
  enqueue(deliveries: readonly PendingDelivery[]): Promise<void>;
  /**
   * Up to `limit` deliveries due at or before `now`, fair between owners (decision 50, `dueInTurns`):
   * each owner's earliest before any owner's second, then its further turns, then the rest of the
   * busiest owners' queues, earliest due first. One owner alone gets the whole limit.
   * With `shards` (decision 52, `queueShardOf` of the owner), only the deliveries of those shards.
   */
  due(now: Date, limit: number, shards?: readonly number[]): Promise<PendingDelivery[]>;
  /**
   * Records one attempt in the subscription's log (the newest `keepAttempts` are kept) and moves the
   * delivery on: out of the queue, or due again later with one more attempt counted.
   *
   * With a `fence` (decision 52: the epoch of the lease on the delivery's shard under which it was
   * attempted), nothing is written if the delivery was already written under a later fence: the replica
   * that lost the shard does not undo what its new holder recorded. Resolves false when so fenced off
   * (or the delivery was no longer pending), true when written.
   */
  recordAttempt(
    delivery: PendingDelivery,
    attempt: WebhookDelivery,
    outcome: AttemptOutcome,
    keepAttempts: number,
    fence?: number,
  ): Promise<boolean>;
  /**
   * Takes a delivery out of the queue without an attempt (its authorization ended, so a score must not
   * be sent): nothing is logged, and its key stays known like a delivered one's. `fence` as for `recordAttempt`.
   */
  discard(delivery: PendingDelivery, fence?: number): Promise<boolean>;
  /** Newest first. */
  attempts(webhookId: string, limit: number): Promise<WebhookDelivery[]>;
  /** How many deliveries wait, and since when the oldest is due (for the metrics). */
  queueStats(): Promise<{ depth: number; oldestDueAt: string | null }>;
  /**
   * Decision 56: forgets every subscription of the organization (its grants' webhooks and its alert
   * subscriptions), with their queued deliveries (bodies included) and their attempts. Idempotent.
   */
  purgeOrganization(organizationId: string): Promise<void>;
  close(): Promise<void>;
}
