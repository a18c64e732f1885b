import type { Db } from 'mongodb';
import { isListed, type ListedView, type ViewDefinition } from '@rsd/domain';
import type { ListRange, ViewStore } from '@rsd/ports';
import { isDuplicateKeyError } from './duplicate-key';
import { reportingOutages } from './outages';

/** One collection per view, named after it; the state is kept whole, beside what the store itself needs. */
export interface ViewDocument {
  _id: string;
  version: string;
  state: unknown;
  /** Listed views only: what `list` filters and sorts on. */
  partition?: string;
  sortKey?: string;
}

/**
 * The view store on MongoDB (or FerretDB). A write is one conditional upsert whose filter is the
 * version guard: if a same-or-newer version is stored the filter misses, the upsert's insert clashes
 * on `_id` (E11000), and that clash is the refusal. `close` leaves the client to its owner.
 */
export async function openMongoViewStore(db: Db, views: readonly ViewDefinition<unknown>[]): Promise<ViewStore> {
  // A derived view reads its listed view's index.
  for (const view of new Set(views.map((view) => view.headOf ?? view).filter(isListed))) {
    await db.collection<ViewDocument>(view.name).createIndexes([{ key: { partition: 1, sortKey: -1 } }]);
  }
  const collectionOf = (view: ViewDefinition<unknown>) => db.collection<ViewDocument>(view.name);

  const store: ViewStore = {
    async get<S>(view: ViewDefinition<S>, key: string) {
      if (view.headOf) return (await store.list(view.headOf, key, { limit: 1 }))[0];
      // On the request path, so by `_id` alone: a top-level equality, which FerretDB 1.24 hands down to its backend.
      const found = await collectionOf(view).findOne({ _id: key }, { projection: { state: 1 } });
      return found?.state as S | undefined;
    },

    async getMany<S>(view: ViewDefinition<S>, keys: readonly string[]) {
      const found = new Map<string, S>();
      if (keys.length === 0) return found;
      if (view.headOf) {
        // A head is the first document of its partition's index range: one indexed query each, all in flight together.
        const heads = await Promise.all(keys.map((key) => store.get(view, key)));
        heads.forEach((state, at) => state !== undefined && found.set(keys[at] as string, state));
        return found;
      }
      const documents = await collectionOf(view)
        .find({ _id: { $in: [...keys] } }, { projection: { state: 1 } })
        .toArray();
      for (const document of documents) found.set(document._id, document.state as S);
      return found;
    },

    async put<S>(view: ViewDefinition<S>, key: string, state: S) {
      const version = view.versionOf(state);
      const document: ViewDocument = { _id: key, version, state };
      if (isListed(view)) {
        document.partition = view.partitionOf(state);
        document.sortKey = view.sortKeyOf(state);
      }
      try {
        await collectionOf(view).replaceOne({ _id: key, version: { $lt: version } }, document, { upsert: true });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    },

    async list<S>(view: ListedView<S>, partition: string, { limit, atLeast, atMost, below }: ListRange) {
      if (limit <= 0) return [];
      const sortKey = {
        ...(atLeast !== undefined ? { $gte: atLeast } : {}),
        ...(atMost !== undefined ? { $lte: atMost } : {}),
        ...(below !== undefined ? { $lt: below } : {}),
      };
      // Served by the { partition, sortKey } index: a range over years of one organization's history reads only its page.
      const filter = Object.keys(sortKey).length > 0 ? { partition, sortKey } : { partition };
      const found = await collectionOf(view)
        .find(filter, { projection: { state: 1 }, sort: { sortKey: -1 }, limit })
        .toArray();
      return found.map((document) => document.state as S);
    },

    async purgeOrganization(view: ViewDefinition<unknown>, organizationId: string) {
      if (view.headOf) return;
      await collectionOf(view).deleteMany({ 'state.organizationId': organizationId });
    },

    close: () => Promise.resolve(),
  };
  return reportingOutages(store);
}
