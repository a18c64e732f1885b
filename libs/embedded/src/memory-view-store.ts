import { isListed, type ListedView, type ViewDefinition } from '@rsd/domain';
import type { ListRange, ViewStore } from '@rsd/ports';

interface Document {
  state: unknown;
  version: string;
  sortKey?: string;
}

/** One partition's keys, greatest sort key first, kept sorted on insert so a list reads a slice. */
interface Listing {
  keys: string[];
  sortKeys: string[];
}

/**
 * The view store held in memory. States are copied and deep-frozen on the way in and handed out as
 * they are: callers cannot change the store, and the read path copies nothing.
 */
export function createMemoryViewStore(): ViewStore {
  const documents = new Map<string, Map<string, Document>>();
  const listings = new Map<string, Map<string, Listing>>();

  const documentsOf = (view: string) => getOrAdd(documents, view, () => new Map<string, Document>());

  const store: ViewStore = {
    async getMany<S>(view: ViewDefinition<S>, keys: readonly string[]) {
      const found = new Map<string, S>();
      for (const key of keys) {
        const state = await store.get(view, key);
        if (state !== undefined) found.set(key, state);
      }
      return found;
    },

    get<S>(view: ViewDefinition<S>, key: string) {
      if (view.headOf) return store.list(view.headOf, key, { limit: 1 }).then(([head]) => head);
      return Promise.resolve(documentsOf(view.name).get(key)?.state as S | undefined);
    },

    put<S>(view: ViewDefinition<S>, key: string, state: S) {
      const stored = documentsOf(view.name).get(key);
      const version = view.versionOf(state);
      if (stored && stored.version >= version) return Promise.resolve(false);
      const document: Document = { state: deepFrozenCopy(state), version };
      if (isListed(view)) {
        document.sortKey = view.sortKeyOf(state);
        const listing = getOrAdd(
          getOrAdd(listings, view.name, () => new Map<string, Listing>()),
          view.partitionOf(state),
          () => ({
            keys: [],
            sortKeys: [],
          }),
        );
        if (stored?.sortKey !== document.sortKey) {
          if (stored?.sortKey !== undefined) removeFrom(listing, key, stored.sortKey);
          insertInto(listing, key, document.sortKey);
        }
      }
      documentsOf(view.name).set(key, document);
      return Promise.resolve(true);
    },

    list<S>(view: ListedView<S>, partition: string, range: ListRange) {
      const listing = listings.get(view.name)?.get(partition);
      if (!listing || range.limit <= 0) return Promise.resolve([]);
      const stored = documentsOf(view.name);
      // Two binary searches find the first key in range; the rest is a walk of at most `limit` keys.
      let start = range.atMost === undefined ? 0 : firstAtOrBelow(listing, range.atMost);
      if (range.below !== undefined) start = Math.max(start, positionOf(listing, range.below));
      const states: S[] = [];
      for (let at = start; at < listing.keys.length && states.length < range.limit; at += 1) {
        if (range.atLeast !== undefined && (listing.sortKeys[at] as string) < range.atLeast) break;
        states.push(stored.get(listing.keys[at] as string)?.state as S);
      }
      return Promise.resolve(states);
    },

    purgeOrganization(view, organizationId) {
      const stored = documentsOf(view.name);
      for (const [key, document] of stored) {
        if ((document.state as { organizationId?: unknown }).organizationId !== organizationId) continue;
        stored.delete(key);
        if (isListed(view) && document.sortKey !== undefined) {
          const listing = listings.get(view.name)?.get(view.partitionOf(document.state));
          if (listing) removeFrom(listing, key, document.sortKey);
        }
      }
      return Promise.resolve();
    },

    close: () => Promise.resolve(),
  };
  return store;
}

export function getOrAdd<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

/** The first index whose sort key is smaller than `sortKey` (the list is in descending order). */
function positionOf(listing: Listing, sortKey: string): number {
  return firstIndexWhere(listing, (key) => key < sortKey);
}

/** The first index whose sort key is at or below `sortKey`. */
function firstAtOrBelow(listing: Listing, sortKey: string): number {
  return firstIndexWhere(listing, (key) => key <= sortKey);
}

/** Binary search: `found` is false up to some index of the descending list and true from it on. */
function firstIndexWhere(listing: Listing, found: (sortKey: string) => boolean): number {
  let low = 0;
  let high = listing.sortKeys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (found(listing.sortKeys[middle] as string)) high = middle;
    else low = middle + 1;
  }
  return low;
}

function insertInto(listing: Listing, key: string, sortKey: string): void {
  const at = positionOf(listing, sortKey);
  listing.keys.splice(at, 0, key);
  listing.sortKeys.splice(at, 0, sortKey);
}

function removeFrom(listing: Listing, key: string, sortKey: string): void {
  for (let at = positionOf(listing, sortKey) - 1; at >= 0 && listing.sortKeys[at] === sortKey; at -= 1) {
    if (listing.keys[at] === key) {
      listing.keys.splice(at, 1);
      listing.sortKeys.splice(at, 1);
      return;
    }
  }
}

export function deepFrozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const nested of Object.values(value)) deepFreeze(nested);
    Object.freeze(value);
  }
  return value;
}
