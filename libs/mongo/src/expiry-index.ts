import { MongoServerError, type Collection } from 'mongodb';

/** MongoDB's codes for an index that exists with other options; FerretDB answers NotImplemented (238) to `expireAfterSeconds`. */
const INDEX_OPTIONS_CONFLICT = new Set([85, 86]);
const NOT_IMPLEMENTED = 238;

/**
 * A TTL index on `field`, its expiry set to `seconds` even when it existed with another one (a
 * changed retention); true when the server keeps it. A server without TTL indexes gets a plain
 * index on the field for `prune`.
 */
export async function ensureExpiry<T extends { _id: string }>(collection: Collection<T>, field: string, seconds: number): Promise<boolean> {
  const name = `${field}_ttl`;
  try {
    await collection.createIndex({ [field]: 1 }, { name, expireAfterSeconds: seconds });
    return true;
  } catch (error) {
    if (!(error instanceof MongoServerError)) throw error;
    if (typeof error.code === 'number' && INDEX_OPTIONS_CONFLICT.has(error.code)) {
      await collection.db.command({ collMod: collection.collectionName, index: { name, expireAfterSeconds: seconds } });
      return true;
    }
    if (error.code !== NOT_IMPLEMENTED && !/not implemented/i.test(error.message)) throw error;
    await collection.createIndex({ [field]: 1 }, { name: `${field}_1` });
    return false;
  }
}
