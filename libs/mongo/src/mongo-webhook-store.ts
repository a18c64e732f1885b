import { MongoBulkWriteError, ObjectId, type Collection, type Db, type Filter, type UpdateFilter } from 'mongodb';
import type { WebhookDelivery, WebhookPayloadType } from '@rsd/contracts';
import { cutOffDisables, dueInTurns, queueShardOf } from '@rsd/domain';
import { systemClock } from '@rsd/platform';
import type { Clock, PendingDelivery, StoredWebhook, WebhookStore } from '@rsd/ports';
import { isDuplicateKeyError } from './duplicate-key';
import { ensureExpiry } from './expiry-index';
import { reportingOutages } from './outages';
import { createPerKeyQueue } from './per-key-queue';
import { CLAIM_TAKEOVER_MS, openWriteClaims } from './write-claims';

export const WEBHOOKS_COLLECTION = 'webhooks';
export const WEBHOOK_DELIVERIES_COLLECTION = 'webhook_deliveries';
export const WEBHOOK_ATTEMPTS_COLLECTION = 'webhook_attempts';
/** Where replicas claim a subscription's next write (`openWriteClaims`). */
export const WEBHOOK_WRITE_CLAIMS_COLLECTION = 'webhook_write_claims';

/** How long a delivery's key is remembered after it was queued (the port's 7 days). */
const KEY_RETENTION_MS = 7 * 86_400_000;
/** Without a TTL index, how often this process deletes the forgotten keys itself. */
const PRUNE_INTERVAL_MS = 3_600_000;

/**
 * A subscription. `slot` is its place among its Client ID's subscriptions, 0 to limit − 1: with the
 * unique index on `(clientId, slot)` a Client ID can never hold more than `limit`, however many
 * replicas add at once, and no counter can drift from the documents it counts.
 */
interface WebhookDocument extends Omit<StoredWebhook, 'id'> {
  _id: string;
  slot: number;
  /** The store's own write sequence (see `openWriteClaims`); absent until a write has changed the subscription. */
  writeSeq?: number;
}

/**
 * A delivery, under its key. While `pending` it is the queue entry; once `done` it keeps only the key
 * (and what finds and expires it), so that the same key is not queued again for 7 days after it was
 * queued. `doneAt` exists only on done deliveries, so the TTL index on it never touches the queue.
 */
interface DeliveryDocument {
  _id: string;
  messageId: string;
  webhookId: string;
  clientId: string;
  eventType: WebhookPayloadType;
  /** As sent; kept once done, for a redelivery, until the key expires. */
  body?: string;
  attempts: number;
  firstAttemptAt: string | null;
  dueAt?: string;
  state: 'pending' | 'done';
  queuedAt: Date;
  doneAt?: Date;
  /** The trace context of the event it was planned from (decision 39), while pending. */
  traceparent?: string;
  tracestate?: string;
  /** The grant whose data it carries (`PendingDelivery.grantClientId`); kept once done, for a redelivery. */
  grantClientId?: string;
  /** Decision 52: its owner's queue shard (`queueShardOf`), whose lease says which replica works it. */
  shard?: number;
  /** The newest lease epoch (fence) under which an attempt of it was recorded. */
  fence?: number;
}

interface AttemptDocument extends WebhookDelivery {
  _id: ObjectId;
  webhookId: string;
  /** When it was made, or was due if it was not: the log's order, with `_id` (made in this process, in order) for ties. */
  at: string;
}

export interface MongoWebhookStoreOptions {
  /** Dates the queueing of a delivery, from which its key is remembered for 7 days. */
  clock?: Clock;
  /** Told once whether the server forgets delivered keys itself (a TTL index) or this store prunes them hourly. */
  onExpiry?: (expiry: 'ttl-index' | 'prune') => void;
}

/**
 * The notifier's store on MongoDB (or FerretDB), in its own database.
 *
 * Lookups are by `_id` or by top-level equality (`clientId`, `organizationId` and `status`,
 * `webhookId`, `state`), which FerretDB 1.24 also hands down to its backend; only `due` adds a range
 * on `dueAt` within the pending deliveries, and the owners it skips or keeps (`$nin`, `$in`: plain
 * `find` filters, no aggregation, which FerretDB evaluates itself after the `state` equality). Instants are ISO strings with milliseconds, so string
 * order is time order on both servers.
 *
 * There are no multi-document transactions, so changes spanning collections are ordered to be safe
 * under concurrency: a delivery or attempt is written first and then kept only if its subscription
 * is (still) active or present, while disabling and deleting change the subscription first and then
 * clear what belongs to it. Whichever runs first, nothing pending outlives a disabled or deleted
 * subscription. The guarded updates of a delivery (`state: 'pending'`) are atomic on MongoDB;
 * FerretDB 1.24 evaluates such a filter on a read and then rewrites the document, so the writes of
 * one subscription are also run one at a time in this process, and every change of a subscription
 * is made by the one writer of its next write sequence number (`openWriteClaims`, as the
 * authorizations' store does): two replicas changing one subscription at once (a PATCH and the
 * worker's disable) could otherwise both "match", and the later rewrite would undo the earlier.
 *
 * Decision 52: replicas share the queue by shards (`queueShardOf` of the owner, kept on each delivery),
 * each worked by the holder of its lease; an attempt's outcome carries the lease's fence and is written
 * only if no later fence wrote the delivery. On MongoDB that filter is atomic; on FerretDB it narrows
 * the overlap of a lost holder and its successor to the moment between its read and its rewrite, which
 * only a takeover opens (docs/decisions/0052-every-service-scales-out.md).
 */
export async function openMongoWebhookStore(db: Db, options: MongoWebhookStoreOptions = {}): Promise<WebhookStore> {
  const clock = options.clock ?? systemClock;
  const webhooks = db.collection<WebhookDocument>(WEBHOOKS_COLLECTION);
  const deliveries = db.collection<DeliveryDocument>(WEBHOOK_DELIVERIES_COLLECTION);
  const attemptLog = db.collection<AttemptDocument>(WEBHOOK_ATTEMPTS_COLLECTION);
  // One index per command: FerretDB 1.24 drops the connection (a panic) when one command names several that already exist.
  await webhooks.createIndex({ clientId: 1, slot: 1 }, { unique: true, name: 'clientId_slot_unique' });
  await webhooks.createIndex({ clientId: 1, createdAt: 1 });
  await webhooks.createIndex({ organizationId: 1, status: 1, createdAt: 1 });
  // A grant's webhook made with its account's key answers to the account's keys.
  await webhooks.createIndex({ keyOwner: 1 });
  // The queue in its order, with each delivery's owner: skipping an owner that had its turns fetches no document (decision 50).
  await deliveries.createIndex({ state: 1, dueAt: 1, _id: 1, clientId: 1 });
  // The index before it, a prefix of this one: dropped where an earlier version made it.
  if (await deliveries.indexExists('state_1_dueAt_1__id_1')) await deliveries.dropIndex('state_1_dueAt_1__id_1');
  // Decision 52: a replica's shards of the queue, in the queue's order.
  await deliveries.createIndex({ state: 1, shard: 1, dueAt: 1, _id: 1, clientId: 1 });
  await deliveries.createIndex({ webhookId: 1, state: 1 });
  await deliveries.createIndex({ messageId: 1 });
  await giveShards(deliveries);
  await attemptLog.createIndex({ webhookId: 1, at: -1, _id: -1 });
  const keysExpire = await ensureExpiry(deliveries, 'doneAt', KEY_RETENTION_MS / 1000);
  options.onExpiry?.(keysExpire ? 'ttl-index' : 'prune');

  const soleWriter = await openWriteClaims(db, WEBHOOK_WRITE_CLAIMS_COLLECTION);
  const writes = createPerKeyQueue();
  let closed = false;
  let prunedAt = Number.NEGATIVE_INFINITY;

  function write<T>(webhookId: string, task: () => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new Error('the webhook store is closed'));
    return writes.run(webhookId, task);
  }

  /**
   * Changes one subscription as the one writer of its next write: `change` decides from the
   * subscription as read (again after a lost claim) the update to make, or undefined to leave it
   * (`skipped`). `lost` when other writers kept the next write (see `openWriteClaims`).
   */
  function changeWebhook(id: string, change: (current: WebhookDocument) => UpdateFilter<WebhookDocument> | undefined) {
    return soleWriter(
      id,
      async () => {
        const current = await webhooks.findOne({ _id: id });
        const update = current ? change(current) : undefined;
        return current && update ? { writeSeq: current.writeSeq, update } : undefined;
      },
      async ({ update }, sequence) => {
        const { matchedCount } = await webhooks.updateOne(
          { _id: id, ...sequence.filter },
          { ...update, $set: { ...update.$set, ...sequence.set } },
        );
        return matchedCount > 0;
      },
    );
  }

  /**
   * A change that must not be dropped (a disable): tried again, a second apart, while other writers keep
   * the subscription, until a dead writer's claim would have been taken over; then an error.
   */
  async function changeWebhookSurely(id: string, change: (current: WebhookDocument) => UpdateFilter<WebhookDocument> | undefined) {
    const deadline = Date.now() + CLAIM_TAKEOVER_MS + 5_000;
    for (;;) {
      const outcome = await changeWebhook(id, change);
      if (outcome !== 'lost') return outcome;
      if (Date.now() >= deadline) throw new Error(`webhook ${id} kept changing under its disable`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }

  const findWebhooks = async (filter: Partial<WebhookDocument>) =>
    (await webhooks.find(filter, { sort: { createdAt: 1, _id: 1 } }).toArray()).map(webhookOf);

  /** Inserts what is new and returns the keys that were there already. */
  async function insertNew(documents: readonly DeliveryDocument[]): Promise<string[]> {
    try {
      await deliveries.insertMany([...documents], { ordered: false });
      return [];
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const failures = [error.writeErrors].flat();
      if (!failures.every((failure) => failure.code === 11000)) throw error;
      return failures.map((failure) => documents[failure.index]?._id).filter((key) => key !== undefined);
    }
  }

  /** Where the server keeps no TTL index, at most once an hour per process (a scan of the keys on FerretDB). */
  async function pruneKeys(now: Date): Promise<void> {
    if (keysExpire || now.getTime() - prunedAt < PRUNE_INTERVAL_MS) return;
    prunedAt = now.getTime();
    await deliveries.deleteMany({ state: 'done', doneAt: { $lte: new Date(now.getTime() - KEY_RETENTION_MS) } });
  }

  async function enqueueFor(webhookId: string, owed: readonly PendingDelivery[], now: Date): Promise<void> {
    const documents = owed.map((delivery) => deliveryDocumentOf(delivery, now));
    const clashes = await insertNew(documents);
    const forgottenBefore = new Date(now.getTime() - KEY_RETENTION_MS);
    for (const key of new Set(clashes)) {
      const document = documents.find((candidate) => candidate._id === key);
      if (!document) continue;
      const { _id, ...fields } = document;
      // A key done and queued more than 7 days ago that the server has not removed yet is forgotten already.
      await deliveries.replaceOne({ _id, state: 'done', queuedAt: { $lte: forgottenBefore } }, fields);
    }
    const active = await webhooks.findOne({ _id: webhookId, status: 'active' }, { projection: { _id: 1 } });
    if (!active) await deliveries.deleteMany({ webhookId, state: 'pending' });
  }

  return reportingOutages<WebhookStore>({
    async addWebhook(webhook, limit) {
      if (closed) throw new Error('the webhook store is closed');
      for (;;) {
        const taken = await webhooks.find({ clientId: webhook.clientId }, { projection: { slot: 1 } }).toArray();
        if (taken.length >= limit) return 'limit-reached';
        const used = new Set(taken.map((document) => document.slot));
        let slot = 0;
        while (used.has(slot)) slot += 1;
        try {
          await webhooks.insertOne({ ...webhookDocumentOf(webhook), slot });
          return 'added';
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
          if (await webhooks.findOne({ _id: webhook.id }, { projection: { _id: 1 } })) {
            throw new Error(`webhook ${webhook.id} already exists`, { cause: error });
          }
          // Another add took the slot first: count again.
        }
      }
    },

    listWebhooks(clientId) {
      return findWebhooks({ clientId });
    },

    async findWebhook(clientId, id) {
      // By `_id` alone, which FerretDB hands down; the Client ID is checked here.
      const found = await webhooks.findOne({ _id: id });
      return found?.clientId === clientId ? webhookOf(found) : undefined;
    },

    deleteWebhook(clientId, id) {
      return write(id, async () => {
        const { deletedCount } = await webhooks.deleteOne({ _id: id, clientId });
        if (deletedCount === 0) return false;
        await deliveries.deleteMany({ webhookId: id });
        await attemptLog.deleteMany({ webhookId: id });
        return true;
      });
    },

    async purgeOrganization(organizationId) {
      const owned = await webhooks.find({ organizationId }, { projection: { _id: 1 } }).toArray();
      // Each webhook as its own deletion does it, in its turn among that webhook's writes.
      for (const { _id: id } of owned) {
        await write(id, async () => {
          await webhooks.deleteOne({ _id: id });
          await deliveries.deleteMany({ webhookId: id });
          await attemptLog.deleteMany({ webhookId: id });
        });
      }
    },

    activeWebhooksOfOrganization(organizationId) {
      return findWebhooks({ organizationId, status: 'active' });
    },

    activeWebhooksOfClient(clientId) {
      return findWebhooks({ clientId, status: 'active' });
    },

    disableWebhook(id, at) {
      return write(id, async () => {
        await changeWebhookSurely(id, (current) =>
          current.status === 'active' ? { $set: { status: 'disabled', disabledAt: at, disabledReason: 'delivery_failures' } } : undefined,
        );
        await deliveries.updateMany({ webhookId: id, state: 'pending' }, finished(clock.now()));
      });
    },

    async disableWebhooksOfKeys(cutOff) {
      const { keyOwner } = cutOff;
      // By top-level equality, which FerretDB hands down: its own, and those its keys made for others.
      const found = [...(await webhooks.find({ clientId: keyOwner }).toArray()), ...(await webhooks.find({ keyOwner }).toArray())];
      const ids = new Set(
        found.filter((document) => (document.keyOwner ?? document.clientId) === keyOwner).map((document) => document._id),
      );
      let disabled = 0;
      for (const id of ids) {
        // Each one read again and changed in its own turn, after or before any other change to it.
        const counted = await write(id, async () => {
          // Whether the subscription, as last read, was already disabled by this cut-off.
          let already = false;
          const outcome = await changeWebhookSurely(id, (current) => {
            already = false;
            if ((current.keyOwner ?? current.clientId) !== keyOwner) return undefined;
            if (cutOffDisables(webhookOf(current), cutOff)) {
              return { $set: { status: 'disabled', disabledAt: cutOff.at, disabledReason: cutOff.reason } };
            }
            already = current.disabledReason === cutOff.reason && current.disabledAt === cutOff.at;
            return undefined;
          });
          if (outcome === 'skipped') return already;
          await deliveries.updateMany({ webhookId: id, state: 'pending' }, finished(clock.now()));
          return true;
        });
        if (counted) disabled += 1;
      }
      return disabled;
    },

    updateWebhook(webhook, expectedStatus) {
      return write(webhook.id, async () => {
        const { _id, ...fields } = webhookDocumentOf(webhook);
        // The subscription as given: an optional field it no longer has is removed, not left as it was.
        const absent = OPTIONAL_FIELDS.filter((field) => !(field in fields));
        const outcome = await changeWebhook(_id, (current) =>
          current.clientId !== webhook.clientId || current.status !== expectedStatus
            ? undefined
            : absent.length > 0
              ? { $set: fields, $unset: Object.fromEntries(absent.map((field) => [field, ''])) }
              : { $set: fields },
        );
        // Skipped (its status moved on) or lost to other writers: the caller reads it again and decides anew.
        if (outcome !== 'written') return false;
        if (webhook.status !== 'active') await deliveries.updateMany({ webhookId: _id, state: 'pending' }, finished(clock.now()));
        return true;
      });
    },

    async findMessage(webhookId, messageId) {
      // By `messageId` alone, which FerretDB hands down; the subscription is checked here.
      const found = await deliveries.find({ messageId }, { sort: { queuedAt: 1 } }).toArray();
      const message = found.find((document) => document.webhookId === webhookId && document.body !== undefined);
      if (!message?.body) return undefined;
      const { _id, clientId, eventType, body, grantClientId } = message;
      return { key: _id, messageId, webhookId, clientId, eventType, body, ...(grantClientId ? { grantClientId } : {}) };
    },

    async enqueue(owed) {
      if (owed.length === 0) return;
      const now = clock.now();
      const byWebhook = new Map<string, PendingDelivery[]>();
      for (const delivery of owed) byWebhook.set(delivery.webhookId, [...(byWebhook.get(delivery.webhookId) ?? []), delivery]);
      await Promise.all([...byWebhook].map(([webhookId, ofWebhook]) => write(webhookId, () => enqueueFor(webhookId, ofWebhook, now))));
      await pruneKeys(now);
    },

    due(now, limit, shards) {
      const until = now.toISOString();
      const ofShards: Filter<DeliveryDocument> = shards ? { shard: { $in: [...shards] } } : {};
      const inQueueOrder = async (filter: Filter<DeliveryDocument>, count: number) =>
        (await deliveries.find({ state: 'pending', ...ofShards, ...filter }, { sort: { dueAt: 1, _id: 1 }, limit: count }).toArray()).map(
          pendingOf,
        );
      return dueInTurns<PendingDelivery>(limit, {
        next: (after, skippedOwners, count) =>
          inQueueOrder(
            {
              ...(after
                ? { dueAt: { $gte: after.dueAt, $lte: until }, $or: [{ dueAt: { $gt: after.dueAt } }, { _id: { $gt: after.key } }] }
                : { dueAt: { $lte: until } }),
              ...(skippedOwners.length > 0 ? { clientId: { $nin: [...skippedOwners] } } : {}),
            },
            count,
          ),
        more: (owners, skippedKeys, count) =>
          inQueueOrder({ dueAt: { $lte: until }, clientId: { $in: [...owners] }, _id: { $nin: [...skippedKeys] } }, count),
      });
    },

    recordAttempt(delivery, attempt, outcome, keepAttempts, fence) {
      return write(delivery.webhookId, async () => {
        const filter = fenced(delivery, fence);
        const fenceSet = fence === undefined ? {} : { fence };
        let matched: number;
        if (outcome.next === 'done') {
          const done = finished(clock.now());
          ({ matchedCount: matched } = await deliveries.updateOne(filter, { ...done, $set: { ...done.$set, ...fenceSet } }));
        } else {
          const firstAttemptAt = instant(delivery.firstAttemptAt ?? attempt.attemptedAt ?? clock.now().toISOString());
          ({ matchedCount: matched } = await deliveries.updateOne(filter, {
            $set: { firstAttemptAt, dueAt: instant(outcome.dueAt), ...fenceSet },
            $inc: { attempts: 1 },
          }));
        }
        // Fenced off: the shard's new holder has the delivery; its own attempt is the one logged.
        if (matched === 0 && fence !== undefined) return false;
        await logAttempt(delivery.webhookId, attempt, keepAttempts);
        return matched > 0;
      });
    },

    discard(delivery, fence) {
      return write(delivery.webhookId, async () => {
        const done = finished(clock.now());
        const { matchedCount } = await deliveries.updateOne(fenced(delivery, fence), {
          ...done,
          $set: { ...done.$set, ...(fence === undefined ? {} : { fence }) },
        });
        return matchedCount > 0;
      });
    },

    async attempts(webhookId, limit) {
      if (limit <= 0) return [];
      const found = await attemptLog.find({ webhookId }, { sort: { at: -1, _id: -1 }, limit }).toArray();
      return found.map(attemptOf);
    },

    async queueStats() {
      const [depth, oldest] = await Promise.all([
        deliveries.countDocuments({ state: 'pending' }),
        deliveries.findOne({ state: 'pending' }, { sort: { dueAt: 1, _id: 1 }, projection: { dueAt: 1 } }),
      ]);
      return { depth, oldestDueAt: oldest?.dueAt ?? null };
    },

    async close() {
      closed = true;
      await writes.idle();
    },
  });

  async function logAttempt(webhookId: string, attempt: WebhookDelivery, keepAttempts: number): Promise<void> {
    const logged = attemptOf(attempt);
    await attemptLog.insertOne({ ...logged, _id: new ObjectId(), webhookId, at: instant(attempt.attemptedAt ?? attempt.scheduledAt) });
    // Deleted meanwhile: its delete may have cleared the log before this insert.
    if (!(await webhooks.findOne({ _id: webhookId }, { projection: { _id: 1 } }))) {
      await attemptLog.deleteMany({ webhookId });
      return;
    }
    const beyond = await attemptLog
      .find({ webhookId }, { sort: { at: -1, _id: -1 }, skip: Math.max(0, keepAttempts), projection: { _id: 1 } })
      .toArray();
    if (beyond.length > 0) await attemptLog.deleteMany({ webhookId, _id: { $in: beyond.map((document) => document._id) } });
  }
}

/** A pending delivery, and with a fence, one no later fence has written (decision 52). */
function fenced(delivery: PendingDelivery, fence: number | undefined): Filter<DeliveryDocument> {
  const pending = { _id: delivery.key, messageId: delivery.messageId, state: 'pending' as const };
  return fence === undefined ? pending : { ...pending, $or: [{ fence: { $exists: false } }, { fence: { $lte: fence } }] };
}

/**
 * Pending deliveries queued before the queue had shards get their owner's, once, by whichever replica
 * opens the store first (others write the same values): until then no replica's `due` would see them.
 */
async function giveShards(deliveries: Collection<DeliveryDocument>): Promise<void> {
  const unsharded = await deliveries
    .find({ state: 'pending', shard: { $exists: false } }, { projection: { _id: 1, clientId: 1 } })
    .toArray();
  const byShard = new Map<number, string[]>();
  for (const { _id, clientId } of unsharded) {
    const shard = queueShardOf(clientId);
    byShard.set(shard, [...(byShard.get(shard) ?? []), _id]);
  }
  for (const [shard, ids] of byShard) await deliveries.updateMany({ _id: { $in: ids } }, { $set: { shard } });
}

/** The fields a subscription may lack, each removed by an update of one that lacks it. */
const OPTIONAL_FIELDS = [
  'conditions',
  'activeSince',
  'previousSealedSecret',
  'previousSecretExpiresAt',
  'disabledReason',
  'keyDigest',
  'keyOwner',
] as const satisfies readonly (keyof StoredWebhook)[];

/** Out of the queue; the key and the body stay until the TTL index (or the prune) removes them. */
function finished(now: Date) {
  return {
    $set: { state: 'done' as const, doneAt: now },
    $unset: { dueAt: '' as const, traceparent: '' as const, tracestate: '' as const },
  };
}

function webhookDocumentOf(webhook: StoredWebhook): Omit<WebhookDocument, 'slot'> {
  const { id, events, ...rest } = webhook;
  return { _id: id, ...withoutUndefined(rest), events: [...events] };
}

function webhookOf(document: WebhookDocument): StoredWebhook {
  const { _id, slot: _slot, writeSeq: _writeSeq, events, ...rest } = document;
  return { id: _id, ...rest, events: [...events] };
}

/** The optional fields a subscription does not have are not written as null. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

function deliveryDocumentOf(delivery: PendingDelivery, queuedAt: Date): DeliveryDocument {
  const { key, messageId, webhookId, clientId, eventType, body, attempts, firstAttemptAt, dueAt, traceparent, tracestate, grantClientId } =
    delivery;
  return {
    _id: key,
    messageId,
    webhookId,
    clientId,
    eventType,
    body,
    attempts,
    firstAttemptAt: firstAttemptAt === null ? null : instant(firstAttemptAt),
    dueAt: instant(dueAt),
    state: 'pending',
    queuedAt,
    shard: queueShardOf(clientId),
    ...(traceparent ? { traceparent, ...(tracestate ? { tracestate } : {}) } : {}),
    ...(grantClientId ? { grantClientId } : {}),
  };
}

function pendingOf(document: DeliveryDocument): PendingDelivery {
  const { _id, messageId, webhookId, clientId, eventType, body, attempts, firstAttemptAt, dueAt, traceparent, tracestate, grantClientId } =
    document;
  if (body === undefined || dueAt === undefined) throw new Error(`delivery ${_id} is pending without a body or a due time`);
  return {
    messageId,
    key: _id,
    webhookId,
    clientId,
    eventType,
    body,
    attempts,
    firstAttemptAt,
    dueAt,
    ...(traceparent ? { traceparent, ...(tracestate ? { tracestate } : {}) } : {}),
    ...(grantClientId ? { grantClientId } : {}),
  };
}

/** Exactly the fields of WebhookDelivery, whatever else the input carries. */
function attemptOf(attempt: WebhookDelivery): WebhookDelivery {
  const { messageId, eventType, attempt: number, status, responseCode, failure, skipped, scheduledAt, attemptedAt } = attempt;
  return {
    messageId,
    eventType,
    attempt: number,
    status,
    responseCode,
    failure,
    ...(skipped ? { skipped } : {}),
    scheduledAt,
    attemptedAt,
  };
}

/** ISO 8601 in UTC with milliseconds, so string order is time order. */
function instant(value: string): string {
  return new Date(value).toISOString();
}
