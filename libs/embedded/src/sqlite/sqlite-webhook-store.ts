import type { StatementSync } from 'node:sqlite';
import type { WebhookDelivery, WebhookPayloadType } from '@rsd/contracts';
import { cutOffDisables, dueInTurns, queueShardOf } from '@rsd/domain';
import { systemClock } from '@rsd/platform';
import type { Clock, PendingDelivery, StoredWebhook, WebhookStore } from '@rsd/ports';
import { integer, recordOf, text } from './database';
import { openStoreDatabase } from './store-database';

/** How long a delivery's key is remembered after it was queued (the port's 7 days). */
const KEY_RETENTION_MS = 7 * 86_400_000;
/** Forgotten keys removed per enqueue at least; more when more are queued, so removal keeps up. */
const MIN_KEYS_PRUNED = 100;

const DUE_COLUMNS =
  'message_id, key, webhook_id, client_id, event_type, body, attempts, first_attempt_at, due_at, traceparent, tracestate, grant_client_id';

/** The store's reads, named so that a test can check that each one goes through an index. */
export const QUERIES = {
  countOfClient: 'SELECT COUNT(*) AS n FROM webhooks WHERE client_id = ?',
  listOfClient: 'SELECT record FROM webhooks WHERE client_id = ? ORDER BY created_at, id',
  find: 'SELECT record FROM webhooks WHERE id = ? AND client_id = ?',
  byId: 'SELECT record FROM webhooks WHERE id = ?',
  // Decision 50: a grant's webhook made with its account's key answers to the account's keys.
  madeForOthers: 'SELECT record FROM webhooks WHERE key_owner = ?',
  activeOfOrganization: 'SELECT record FROM webhooks WHERE organization_id = ? AND active = 1 ORDER BY created_at, id',
  activeOfClient: 'SELECT record FROM webhooks WHERE client_id = ? AND active = 1 ORDER BY created_at, id',
  // Decision 50's turns (dueInTurns): the queue after a place in it, skipping the owners that had their turns …
  due: `SELECT ${DUE_COLUMNS} FROM webhook_deliveries
    WHERE done = 0 AND due_at <= ? AND (due_at, key) > (?, ?) AND client_id NOT IN (SELECT value FROM json_each(?))
      AND (? IS NULL OR shard IN (SELECT value FROM json_each(?)))
    ORDER BY due_at, key LIMIT ?`,
  // … and the rest of those owners' queue.
  dueOfOwners: `SELECT ${DUE_COLUMNS} FROM webhook_deliveries
    WHERE done = 0 AND due_at <= ? AND client_id IN (SELECT value FROM json_each(?)) AND key NOT IN (SELECT value FROM json_each(?))
      AND (? IS NULL OR shard IN (SELECT value FROM json_each(?)))
    ORDER BY due_at, key LIMIT ?`,
  queueStats: 'SELECT COUNT(*) AS depth, MIN(due_at) AS oldest FROM webhook_deliveries WHERE done = 0',
  attempts: 'SELECT record FROM webhook_attempts WHERE webhook_id = ? ORDER BY at DESC, seq DESC LIMIT ?',
  message: `SELECT key, message_id, webhook_id, client_id, event_type, body, grant_client_id FROM webhook_deliveries
    WHERE message_id = ? AND webhook_id = ? AND body IS NOT NULL ORDER BY seq LIMIT 1`,
} as const;

/** The changes that look rows up, named for the same test. */
export const CHANGES = {
  enqueue: `INSERT INTO webhook_deliveries
      (key, message_id, webhook_id, client_id, event_type, body, attempts, first_attempt_at, due_at, queued_ms, done, traceparent, tracestate,
       grant_client_id, shard)
    SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND active = 1)
    ON CONFLICT (key) DO UPDATE SET message_id = excluded.message_id, webhook_id = excluded.webhook_id,
      client_id = excluded.client_id, event_type = excluded.event_type, body = excluded.body, attempts = excluded.attempts,
      first_attempt_at = excluded.first_attempt_at, due_at = excluded.due_at, queued_ms = excluded.queued_ms, done = 0,
      traceparent = excluded.traceparent, tracestate = excluded.tracestate, grant_client_id = excluded.grant_client_id,
      shard = excluded.shard, fence = NULL
    WHERE done = 1 AND queued_ms <= ?`,
  pruneKeys: `DELETE FROM webhook_deliveries WHERE seq IN
    (SELECT seq FROM webhook_deliveries WHERE done = 1 AND queued_ms <= ? ORDER BY queued_ms LIMIT ?)`,
  disable: 'UPDATE webhooks SET active = 0, record = ? WHERE id = ?',
  update:
    "UPDATE webhooks SET active = ?, record = ?, key_owner = ? WHERE id = ? AND client_id = ? AND json_extract(record, '$.status') = ?",
  // The body stays with the key for 7 days: a redelivery sends it again as it was.
  dropPending:
    'UPDATE webhook_deliveries SET done = 1, due_at = NULL, traceparent = NULL, tracestate = NULL WHERE webhook_id = ? AND done = 0',
  deleteWebhook: 'DELETE FROM webhooks WHERE id = ? AND client_id = ?',
  deleteDeliveries: 'DELETE FROM webhook_deliveries WHERE webhook_id = ?',
  deleteAttempts: 'DELETE FROM webhook_attempts WHERE webhook_id = ?',
  logAttempt: `INSERT INTO webhook_attempts (webhook_id, at, record)
    SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?)`,
  trimAttempts: `DELETE FROM webhook_attempts WHERE seq IN
    (SELECT seq FROM webhook_attempts WHERE webhook_id = ? ORDER BY at DESC, seq DESC LIMIT -1 OFFSET ?)`,
  // With a fence (decision 52), only where no later one wrote the delivery.
  delivered: `UPDATE webhook_deliveries SET done = 1, due_at = NULL, traceparent = NULL, tracestate = NULL, fence = COALESCE(?, fence)
    WHERE key = ? AND message_id = ? AND done = 0 AND COALESCE(fence, 0) <= COALESCE(?, fence, 0)`,
  retry: `UPDATE webhook_deliveries SET attempts = attempts + 1, first_attempt_at = COALESCE(first_attempt_at, ?), due_at = ?,
      fence = COALESCE(?, fence)
    WHERE key = ? AND message_id = ? AND done = 0 AND COALESCE(fence, 0) <= COALESCE(?, fence, 0)`,
} as const;

export interface SqliteWebhookStoreOptions {
  file: string;
  /** Dates the queueing of a delivery, from which its key is remembered for 7 days. */
  clock?: Clock;
}

/**
 * The notifier's store in the embedded database: a row per subscription (the record as JSON, and
 * the columns its reads use), a row per delivery key, and the attempts log.
 *
 * A delivery's row is the queue entry while it is pending and, once done, the memory of its key:
 * `body` and `due_at` are cleared and the row stays until 7 days after it was queued. Every enqueue
 * removes a bounded number of forgotten keys through a partial index of the done rows, so the key
 * table never needs a scan, and a forgotten key not yet removed is taken over by the upsert.
 * Deliveries are queued only for a subscription that is active in the same transaction, so a
 * disabled or deleted subscription never gets a pending delivery back.
 */
export function openSqliteWebhookStore(options: SqliteWebhookStoreOptions): WebhookStore {
  const {
    statement,
    read: run,
    write,
    changeSoon: queueSoon,
    close,
  } = openStoreDatabase(options.file, 'the webhook store', createWebhookTables);
  const clock = options.clock ?? systemClock;
  // Deliveries queued before decision 52 get their owner's shard, so that a read of some shards sees them.
  for (const row of statement('SELECT DISTINCT client_id FROM webhook_deliveries WHERE done = 0 AND shard IS NULL').all()) {
    const clientId = text(row.client_id);
    statement('UPDATE webhook_deliveries SET shard = ? WHERE client_id = ? AND shard IS NULL').run(queueShardOf(clientId), clientId);
  }

  const webhooksOf = (rows: Record<string, unknown>[]) => rows.map((row) => JSON.parse(text(row.record)) as StoredWebhook);

  return {
    addWebhook(webhook, limit) {
      return write(() => {
        const row = statement(QUERIES.countOfClient).get(webhook.clientId);
        if (integer(row?.n) >= limit) return 'limit-reached';
        const { changes } = statement(
          `INSERT INTO webhooks (id, client_id, organization_id, created_at, active, record, key_owner) VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (id) DO NOTHING`,
        ).run(
          webhook.id,
          webhook.clientId,
          webhook.organizationId,
          new Date(webhook.createdAt).toISOString(),
          webhook.status === 'active' ? 1 : 0,
          JSON.stringify(webhook),
          keyOwnerColumn(webhook),
        );
        if (changes === 0) throw new Error(`webhook ${webhook.id} already exists`);
        return 'added';
      });
    },

    listWebhooks(clientId) {
      return run(() => webhooksOf(statement(QUERIES.listOfClient).all(clientId)));
    },

    findWebhook(clientId, id) {
      return run(() => recordOf<StoredWebhook>(statement(QUERIES.find).get(id, clientId)));
    },

    purgeOrganization(organizationId) {
      return write(() => {
        const ids = statement('SELECT id FROM webhooks WHERE organization_id = ?')
          .all(organizationId)
          .map((row) => text(row.id));
        for (const id of ids) {
          statement(CHANGES.deleteDeliveries).run(id);
          statement(CHANGES.deleteAttempts).run(id);
        }
        statement('DELETE FROM webhooks WHERE organization_id = ?').run(organizationId);
      });
    },

    deleteWebhook(clientId, id) {
      return write(() => {
        if (statement(CHANGES.deleteWebhook).run(id, clientId).changes === 0) return false;
        statement(CHANGES.deleteDeliveries).run(id);
        statement(CHANGES.deleteAttempts).run(id);
        return true;
      });
    },

    activeWebhooksOfOrganization(organizationId) {
      return run(() => webhooksOf(statement(QUERIES.activeOfOrganization).all(organizationId)));
    },

    activeWebhooksOfClient(clientId) {
      return run(() => webhooksOf(statement(QUERIES.activeOfClient).all(clientId)));
    },

    disableWebhook(id, at) {
      return write(() => {
        const row = statement(QUERIES.byId).get(id);
        if (!row) return;
        const webhook = JSON.parse(text(row.record)) as StoredWebhook;
        if (webhook.status === 'active') {
          statement(CHANGES.disable).run(
            JSON.stringify({ ...webhook, status: 'disabled', disabledAt: at, disabledReason: 'delivery_failures' }),
            id,
          );
        }
        statement(CHANGES.dropPending).run(id);
      });
    },

    disableWebhooksOfKeys(cutOff) {
      return write(() => {
        // Its own (kept under it, unless another's key made them) and those its keys made for others: one transaction.
        const concerned = new Map<string, StoredWebhook>();
        for (const row of [
          ...statement(QUERIES.listOfClient).all(cutOff.keyOwner),
          ...statement(QUERIES.madeForOthers).all(cutOff.keyOwner),
        ]) {
          const webhook = JSON.parse(text(row.record)) as StoredWebhook;
          if ((webhook.keyOwner ?? webhook.clientId) === cutOff.keyOwner) concerned.set(webhook.id, webhook);
        }
        let disabled = 0;
        for (const webhook of concerned.values()) {
          if (cutOffDisables(webhook, cutOff)) {
            const next: StoredWebhook = { ...webhook, status: 'disabled', disabledAt: cutOff.at, disabledReason: cutOff.reason };
            statement(CHANGES.disable).run(JSON.stringify(next), webhook.id);
            statement(CHANGES.dropPending).run(webhook.id);
            concerned.set(webhook.id, next);
          }
          const now = concerned.get(webhook.id);
          if (now?.disabledReason === cutOff.reason && now.disabledAt === cutOff.at) disabled += 1;
        }
        return disabled;
      });
    },

    updateWebhook(webhook, expectedStatus) {
      return write(() => {
        const active = webhook.status === 'active';
        const { changes } = statement(CHANGES.update).run(
          active ? 1 : 0,
          JSON.stringify(webhook),
          keyOwnerColumn(webhook),
          webhook.id,
          webhook.clientId,
          expectedStatus,
        );
        if (changes === 0) return false;
        if (!active) statement(CHANGES.dropPending).run(webhook.id);
        return true;
      });
    },

    findMessage(webhookId, messageId) {
      return run(() => {
        const row = statement(QUERIES.message).get(messageId, webhookId);
        return row
          ? {
              key: text(row.key),
              messageId: text(row.message_id),
              webhookId: text(row.webhook_id),
              clientId: text(row.client_id),
              eventType: text(row.event_type) as WebhookPayloadType,
              body: text(row.body),
              ...grantOf(row),
            }
          : undefined;
      });
    },

    enqueue(deliveries) {
      if (deliveries.length === 0) return Promise.resolve();
      // Not waiting for the commit: whatever the caller writes next (the views, the group's position)
      // joins the same or a later commit on the one connection, so it is never durable before the
      // queue is; a whole page of events then shares one commit instead of one each.
      return queueSoon(() => {
        const queuedMs = clock.now().getTime();
        const forgottenBefore = queuedMs - KEY_RETENTION_MS;
        statement(CHANGES.pruneKeys).run(forgottenBefore, Math.max(MIN_KEYS_PRUNED, 2 * deliveries.length));
        const insert = statement(CHANGES.enqueue);
        for (const delivery of deliveries) {
          insert.run(
            delivery.key,
            delivery.messageId,
            delivery.webhookId,
            delivery.clientId,
            delivery.eventType,
            delivery.body,
            delivery.attempts,
            delivery.firstAttemptAt === null ? null : instant(delivery.firstAttemptAt),
            instant(delivery.dueAt),
            queuedMs,
            delivery.traceparent ?? null,
            delivery.tracestate ?? null,
            delivery.grantClientId ?? null,
            queueShardOf(delivery.clientId),
            delivery.webhookId,
            forgottenBefore,
          );
        }
      });
    },

    due(now, limit, shards) {
      const until = now.toISOString();
      const ofShards = shards ? JSON.stringify(shards) : null;
      return dueInTurns<PendingDelivery>(limit, {
        next: (after, skippedOwners, count) =>
          run(() =>
            statement(QUERIES.due)
              .all(until, after?.dueAt ?? '', after?.key ?? '', JSON.stringify(skippedOwners), ofShards, ofShards, count)
              .map(pendingOf),
          ),
        more: (owners, skippedKeys, count) =>
          run(() =>
            statement(QUERIES.dueOfOwners)
              .all(until, JSON.stringify(owners), JSON.stringify(skippedKeys), ofShards, ofShards, count)
              .map(pendingOf),
          ),
      });
    },

    recordAttempt(delivery, attempt, outcome, keepAttempts, fence) {
      return write(() => {
        let moved: number;
        if (outcome.next === 'done') {
          moved = Number(statement(CHANGES.delivered).run(fence ?? null, delivery.key, delivery.messageId, fence ?? null).changes);
        } else {
          const firstAttemptAt = delivery.firstAttemptAt ?? attempt.attemptedAt ?? clock.now().toISOString();
          moved = Number(
            statement(CHANGES.retry).run(
              instant(firstAttemptAt),
              instant(outcome.dueAt),
              fence ?? null,
              delivery.key,
              delivery.messageId,
              fence ?? null,
            ).changes,
          );
        }
        // Fenced off (decision 52): the attempt of the shard's new holder is the one logged.
        if (moved === 0 && fence !== undefined) return false;
        const logged = statement(CHANGES.logAttempt).run(
          delivery.webhookId,
          attemptTime(attempt),
          JSON.stringify(attempt),
          delivery.webhookId,
        );
        if (logged.changes > 0) statement(CHANGES.trimAttempts).run(delivery.webhookId, Math.max(0, keepAttempts));
        return moved > 0;
      });
    },

    discard(delivery, fence) {
      return write(
        () => Number(statement(CHANGES.delivered).run(fence ?? null, delivery.key, delivery.messageId, fence ?? null).changes) > 0,
      );
    },

    attempts(webhookId, limit) {
      return run(() =>
        statement(QUERIES.attempts)
          .all(webhookId, Math.max(0, limit))
          .map((row) => JSON.parse(text(row.record)) as WebhookDelivery),
      );
    },

    queueStats() {
      return run(() => {
        const row = statement(QUERIES.queueStats).get();
        return { depth: integer(row?.depth), oldestDueAt: row?.oldest === null || row?.oldest === undefined ? null : text(row.oldest) };
      });
    },

    close,
  };
}

export function createWebhookTables(db: { exec(sql: string): void; statement(sql: string): Pick<StatementSync, 'get'> }): void {
  db.exec(`CREATE TABLE IF NOT EXISTS webhooks (
    id TEXT PRIMARY KEY, client_id TEXT NOT NULL, organization_id TEXT NOT NULL, created_at TEXT NOT NULL,
    active INTEGER NOT NULL, record TEXT NOT NULL
  ) WITHOUT ROWID`);
  db.exec('CREATE INDEX IF NOT EXISTS webhooks_by_client ON webhooks (client_id, created_at, id)');
  // A database from before decision 50: the key owner, set only where it is not the owner (a grant's webhook made with an account key).
  if (!db.statement("SELECT 1 FROM pragma_table_info('webhooks') WHERE name = 'key_owner'").get()) {
    db.exec('ALTER TABLE webhooks ADD COLUMN key_owner TEXT');
  }
  db.exec('CREATE INDEX IF NOT EXISTS webhooks_by_key_owner ON webhooks (key_owner) WHERE key_owner IS NOT NULL');
  db.exec('CREATE INDEX IF NOT EXISTS webhooks_active_by_organization ON webhooks (organization_id, created_at, id) WHERE active = 1');
  db.exec(`CREATE TABLE IF NOT EXISTS webhook_deliveries (
    seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, message_id TEXT NOT NULL, webhook_id TEXT NOT NULL,
    client_id TEXT NOT NULL, event_type TEXT NOT NULL, body TEXT, attempts INTEGER NOT NULL, first_attempt_at TEXT,
    due_at TEXT, queued_ms INTEGER NOT NULL, done INTEGER NOT NULL, traceparent TEXT, tracestate TEXT, grant_client_id TEXT
  )`);
  // A database from before decision 39's trace context: SQLite has no ADD COLUMN IF NOT EXISTS.
  if (!db.statement("SELECT 1 FROM pragma_table_info('webhook_deliveries') WHERE name = 'traceparent'").get()) {
    db.exec('ALTER TABLE webhook_deliveries ADD COLUMN traceparent TEXT');
    db.exec('ALTER TABLE webhook_deliveries ADD COLUMN tracestate TEXT');
  }
  // A database from before deliveries named the grant whose data they carry: its queued ones name none (the worker reads it from the body).
  if (!db.statement("SELECT 1 FROM pragma_table_info('webhook_deliveries') WHERE name = 'grant_client_id'").get()) {
    db.exec('ALTER TABLE webhook_deliveries ADD COLUMN grant_client_id TEXT');
  }
  // A database from before decision 52: deliveries get their owner's queue shard, and the fence of the attempt that wrote them.
  if (!db.statement("SELECT 1 FROM pragma_table_info('webhook_deliveries') WHERE name = 'shard'").get()) {
    db.exec('ALTER TABLE webhook_deliveries ADD COLUMN shard INTEGER');
    db.exec('ALTER TABLE webhook_deliveries ADD COLUMN fence INTEGER');
  }
  // The queue in its order, with each delivery's owner: skipping an owner that had its turns reads no row.
  db.exec('CREATE INDEX IF NOT EXISTS webhook_deliveries_due_owner ON webhook_deliveries (due_at, key, client_id) WHERE done = 0');
  db.exec('DROP INDEX IF EXISTS webhook_deliveries_due');
  db.exec('CREATE INDEX IF NOT EXISTS webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, done)');
  db.exec('CREATE INDEX IF NOT EXISTS webhook_deliveries_by_message ON webhook_deliveries (message_id)');
  db.exec('CREATE INDEX IF NOT EXISTS webhook_deliveries_forgettable ON webhook_deliveries (queued_ms) WHERE done = 1');
  db.exec(`CREATE TABLE IF NOT EXISTS webhook_attempts (
    seq INTEGER PRIMARY KEY, webhook_id TEXT NOT NULL, at TEXT NOT NULL, record TEXT NOT NULL
  )`);
  db.exec('CREATE INDEX IF NOT EXISTS webhook_attempts_by_webhook ON webhook_attempts (webhook_id, at, seq)');
}

/** The key owner where it is not the webhook's own owner, else null: only those rows are in the index. */
function keyOwnerColumn(webhook: StoredWebhook): string | null {
  return webhook.keyOwner !== undefined && webhook.keyOwner !== webhook.clientId ? webhook.keyOwner : null;
}

/** ISO 8601 in UTC with milliseconds, so text order is time order. */
function instant(value: string): string {
  return new Date(value).toISOString();
}

/** When the attempt was made, or was due if it was not made: the log's order. */
function attemptTime(attempt: WebhookDelivery): string {
  return instant(attempt.attemptedAt ?? attempt.scheduledAt);
}

function pendingOf(row: Record<string, unknown>): PendingDelivery {
  return {
    messageId: text(row.message_id),
    key: text(row.key),
    webhookId: text(row.webhook_id),
    clientId: text(row.client_id),
    eventType: text(row.event_type) as WebhookPayloadType,
    body: text(row.body),
    attempts: integer(row.attempts),
    firstAttemptAt: row.first_attempt_at === null ? null : text(row.first_attempt_at),
    dueAt: text(row.due_at),
    ...(typeof row.traceparent === 'string' ? { traceparent: row.traceparent } : {}),
    ...(typeof row.tracestate === 'string' ? { tracestate: row.tracestate } : {}),
    ...grantOf(row),
  };
}

function grantOf(row: Record<string, unknown>): { grantClientId?: string } {
  return typeof row.grant_client_id === 'string' ? { grantClientId: row.grant_client_id } : {};
}
