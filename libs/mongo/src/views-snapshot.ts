import type { Db, Document } from 'mongodb';
import type { ViewDefinition } from '@rsd/domain';

/** Every document of every view as stored, `_id` included, sorted by `_id`: two databases holding the same views compare equal. */
export async function snapshotViews(db: Db, views: readonly ViewDefinition<unknown>[]): Promise<Record<string, Document[]>> {
  const collections = await Promise.all(
    views.map(
      async (view) =>
        [
          view.name,
          await db
            .collection(view.name)
            .find({}, { sort: { _id: 1 } })
            .toArray(),
        ] as const,
    ),
  );
  return Object.fromEntries(collections);
}
