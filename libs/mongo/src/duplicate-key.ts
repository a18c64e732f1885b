import { MongoServerError } from 'mongodb';

/** E11000: MongoDB and FerretDB both report a unique-index clash, including an upsert that lost its guard, this way. */
export function isDuplicateKeyError(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}
