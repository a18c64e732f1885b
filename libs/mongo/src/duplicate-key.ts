import { MongoServerError, type Collection, type Document, type OptionalUnlessRequiredId } from 'mongodb';
import type { OutboxEntry } from '@rsd/ports';
import { outboxFieldsOf } from './outbox-fields';

/** E11000: MongoDB and FerretDB both report a unique-index clash, including an upsert that lost its guard, this way. */
export function isDuplicateKeyError(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}

/** `insert` of a new document whose `_id` must be free: one that exists already is an error naming `what`. */
export async function insertNew(what: string, insert: () => Promise<unknown>): Promise<void> {
  try {
    await insert();
  } catch (error) {
    if (isDuplicateKeyError(error)) throw new Error(`${what} already exists`, { cause: error });
    throw error;
  }
}

/**
 * A new document of a kind of its own in a shared collection (a recipient account, an access review
 * among the grants): `_id`, `kind`, its fields and its outbox, refused where the `_id` is taken.
 */
export function insertNewOfKind<D extends Document>(
  collection: Collection<D>,
  document: { id: string; kind: string; what: string },
  fields: Document,
  outbox: readonly OutboxEntry[],
): Promise<void> {
  const { id, kind, what } = document;
  return insertNew(`${what} ${id}`, () =>
    collection.insertOne({ _id: id, kind, ...fields, ...outboxFieldsOf(outbox) } as unknown as OptionalUnlessRequiredId<D>),
  );
}
