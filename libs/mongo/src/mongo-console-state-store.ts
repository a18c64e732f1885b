import type { Db } from 'mongodb';
import type { ConsoleStateKind, ConsoleStateRecord, ConsoleStateStore } from '@rsd/ports';
import { ensureExpiry } from './expiry-index';
import { reportingOutages } from './outages';

export const CONSOLE_STATE_COLLECTION = 'console_state';

/** `_id` is the kind and the digest; `expiresAt` a BSON date for the TTL index. */
interface StateDocument {
  _id: string;
  value: Record<string, string>;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: Date;
}

/** Where the server has no TTL index (FerretDB), expired records are removed by the store itself, at most this often. */
const PRUNE_EVERY_MS = 60_000;

/**
 * The console's state in the credentials database, shared by every replica: a sign-in that begins
 * on one replica finishes on another, and a session outlives a rolling restart. A TTL index removes
 * what has expired; `take` is won by one caller only, so a link or an attempt is used once.
 */
export async function openMongoConsoleStateStore(db: Db): Promise<ConsoleStateStore> {
  const collection = db.collection<StateDocument>(CONSOLE_STATE_COLLECTION);
  const expiresByItself = await ensureExpiry(collection, 'expiresAt', 0);
  let prunedAt = 0;
  const idOf = (kind: ConsoleStateKind, key: string) => `${kind}:${key}`;
  const recordOf = (document: StateDocument | null, now: number): ConsoleStateRecord | undefined =>
    document && document.expiresAt.getTime() > now
      ? { value: document.value, createdAt: document.createdAt, lastSeenAt: document.lastSeenAt, expiresAt: document.expiresAt.getTime() }
      : undefined;

  const store: ConsoleStateStore = {
    async put(kind, key, record) {
      const _id = idOf(kind, key);
      await collection.replaceOne(
        { _id },
        { value: record.value, createdAt: record.createdAt, lastSeenAt: record.lastSeenAt, expiresAt: new Date(record.expiresAt) },
        { upsert: true },
      );
      if (!expiresByItself && record.createdAt - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = record.createdAt;
        await collection.deleteMany({ expiresAt: { $lte: new Date(record.createdAt) } });
      }
    },
    get: async (kind, key, now) => recordOf(await collection.findOne({ _id: idOf(kind, key) }), now),
    async take(kind, key, now) {
      // Not findOneAndDelete: FerretDB may give it to several concurrent callers (the contract test
      // races them). A delete's count is exact on both servers, so only the caller whose delete removed it has it.
      const _id = idOf(kind, key);
      const found = await collection.findOne({ _id });
      if (!found) return undefined;
      const { deletedCount } = await collection.deleteOne({ _id, createdAt: found.createdAt });
      return deletedCount === 1 ? recordOf(found, now) : undefined;
    },
    async touch(kind, key, lastSeenAt, expiresAt) {
      await collection.updateOne({ _id: idOf(kind, key) }, { $set: { lastSeenAt, expiresAt: new Date(expiresAt) } });
    },
    async delete(kind, key) {
      await collection.deleteOne({ _id: idOf(kind, key) });
    },
    close: () => Promise.resolve(),
  };
  return reportingOutages(store);
}
