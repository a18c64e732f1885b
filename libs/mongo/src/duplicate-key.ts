import { MongoServerError } from 'mongodb';

/** E11000: MongoDB and FerretDB both report a unique-index clash, including an upsert that lost its guard, this way. */
export function isDuplicateKeyError(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}

/**
 * A guarded upsert whose guard did not match tries to insert a second document with the same `_id`;
 * the clash means a same-or-newer version is already stored, which is exactly "nothing to do".
 */
export async function ignoringDuplicateKey(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
  }
}
