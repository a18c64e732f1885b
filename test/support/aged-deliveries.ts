import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { MongoClient } from 'mongodb';

/*
 * Decision 45's 24 h of failed deliveries without waiting 24 h: a webhook's pending deliveries made to
 * look as if their first attempt was 25 h ago, in the running product's own store, so that the next
 * failed retry is the last one and the notifier disables the webhook. A retry recorded in between
 * writes the real start back: callers age again on every look.
 */

const AGED_BY_MS = 25 * 3_600_000;

/** On the embedded runtime: a second connection to the product's database in `dataDir`, waiting its turn for the write lock. */
export function ageEmbeddedFirstAttempts(dataDir: string, webhookId: string): Promise<void> {
  const db = new DatabaseSync(join(dataDir, 'rsd.sqlite'));
  try {
    db.exec('PRAGMA busy_timeout = 10000');
    db.prepare('UPDATE webhook_deliveries SET first_attempt_at = ? WHERE webhook_id = ? AND done = 0').run(
      new Date(Date.now() - AGED_BY_MS).toISOString(),
      webhookId,
    );
  } finally {
    db.close();
  }
  return Promise.resolve();
}

/** On the distributed runtime: the notifier's MongoDB database `database`. */
export async function ageMongoFirstAttempts(mongoUrl: string, database: string, webhookId: string): Promise<void> {
  const client = await MongoClient.connect(mongoUrl);
  try {
    await client
      .db(database)
      .collection('webhook_deliveries')
      .updateMany({ webhookId, state: 'pending' }, { $set: { firstAttemptAt: new Date(Date.now() - AGED_BY_MS).toISOString() } });
  } finally {
    await client.close();
  }
}
