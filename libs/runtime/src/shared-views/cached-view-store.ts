import { LRUCache } from 'lru-cache';
import { EVENT_TYPES, type DomainEvent } from '@rsd/contracts';
import type { ListedView, ViewDefinition } from '@rsd/domain';
import type { ListRange, ViewStore } from '@rsd/ports';

export interface CachedViewStoreOptions {
  /** How long a document read from the shared store is reused. */
  ttlMs: number;
  /** How long events seen on this replica's own change feed are applied over what the store says. */
  overlayRetentionMs: number;
  maxEntries: number;
  now?: () => number;
}

export interface CachedViewStore extends ViewStore {
  /** An event from this replica's change feed: applied over every read of the documents it concerns. */
  observe(event: DomainEvent): void;
  /** Drops expired cache entries and events older than the overlay's retention. */
  sweep(): void;
}

interface Cached {
  value: unknown;
  expires: number;
}

interface Seen {
  events: DomainEvent[];
  lastSeenAt: number;
  /**
   * The last document the events were applied over and what they made of it: the same document read again
   * under the same events is the same answer, without applying them again (views are pure). An event
   * observed since clears it.
   */
  applied?: { over: unknown; result: unknown };
}

/** A document's events within the retention are few; the bound only keeps a flood from growing memory. */
const MAX_EVENTS_PER_DOCUMENT = 64;

/**
 * A read-through cache in front of the shared view store (MongoDB), so the request path does no I/O
 * for a document it read recently, plus an overlay of the events this replica has seen on its own
 * change feed.
 *
 * Why a revoked credential is never served past the feed's latency: every read, cached or fresh from
 * the store, is evolved with the events the feed has seen for that document, and the view's `evolve`
 * ignores what the document already holds (duplicates, older revisions). The overlay outlives any
 * cache entry (retention ≫ ttl), so neither a stale cached document nor a store that has not yet
 * projected the change can outlast the event that overrides it. The overlay keeps events, not states,
 * so a revocation seen before its credential reached the store still applies once it does.
 *
 * Writes go to the store beneath (the projection writes there directly); lists are not cached.
 */
export function createCachedViewStore(
  store: ViewStore,
  views: readonly ViewDefinition<unknown>[],
  options: CachedViewStoreOptions,
): CachedViewStore {
  const now = options.now ?? Date.now;
  const cache = new LRUCache<string, Cached>({ max: options.maxEntries });
  const seen = new Map<string, Seen>();
  const documentId = (view: string, key: string) => `${view}\u0000${key}`;

  async function readThrough<S>(view: ViewDefinition<S>, id: string, key: string): Promise<S | undefined> {
    const hit = cache.get(id);
    if (hit && hit.expires > now()) return hit.value as S | undefined;
    const value = await store.get(view, key);
    // Bounded memory: the least recently used entry makes room.
    cache.set(id, { value, expires: now() + options.ttlMs });
    return value;
  }

  /** The document as the events this replica saw for it make it, over what the store (or the cache) said. */
  function overlaid<S>(view: ViewDefinition<S>, id: string, state: S | undefined): S | undefined {
    const entry = seen.get(id);
    if (!entry) return state;
    if (entry.applied && entry.applied.over === state) return entry.applied.result as S | undefined;
    let result = state;
    for (const event of entry.events) result = view.evolve(result, event);
    entry.applied = { over: state, result };
    return result;
  }

  /** Drops every cached document (which were the organization's is not worth finding out) and the organization's events seen. */
  function forget(organizationId: string): void {
    cache.clear();
    for (const [id, entry] of seen) {
      if (entry.events.some((event) => 'organizationId' in event.data && event.data.organizationId === organizationId)) seen.delete(id);
    }
  }

  return {
    async get<S>(view: ViewDefinition<S>, key: string): Promise<S | undefined> {
      const id = documentId(view.name, key);
      return overlaid(view, id, await readThrough(view, id, key));
    },

    /** The cached documents as they are, the others in one read of the store beneath; the overlay applies to all. */
    async getMany<S>(view: ViewDefinition<S>, keys: readonly string[]) {
      const states = new Map<string, S | undefined>();
      const missing: string[] = [];
      for (const key of keys) {
        const hit = cache.get(documentId(view.name, key));
        if (hit && hit.expires > now()) states.set(key, hit.value as S | undefined);
        else missing.push(key);
      }
      if (missing.length > 0) {
        const fetched = await store.getMany(view, missing);
        for (const key of missing) {
          const value = fetched.get(key);
          cache.set(documentId(view.name, key), { value, expires: now() + options.ttlMs });
          states.set(key, value);
        }
      }
      const found = new Map<string, S>();
      for (const key of keys) {
        const state = overlaid(view, documentId(view.name, key), states.get(key));
        if (state !== undefined) found.set(key, state);
      }
      return found;
    },

    put<S>(view: ViewDefinition<S>, key: string, state: S) {
      cache.delete(documentId(view.name, key));
      return store.put(view, key, state);
    },

    // History is not on the hot path and its pages vary by limit: read it from the store.
    list<S>(view: ListedView<S>, partition: string, range: ListRange) {
      return store.list(view, partition, range);
    },

    async purgeOrganization(view, organizationId) {
      forget(organizationId);
      await store.purgeOrganization(view, organizationId);
    },

    observe(event) {
      // Decision 56: nothing of an offboarded organization is served again from this replica's copy.
      if (event.type === EVENT_TYPES.organizationOffboarded) forget(event.data.organizationId);
      for (const view of views) {
        const key = view.keyOf(event);
        if (key === undefined) continue;
        const id = documentId(view.name, key);
        const entry = seen.get(id) ?? { events: [], lastSeenAt: 0 };
        entry.events.push(event);
        if (entry.events.length > MAX_EVENTS_PER_DOCUMENT) entry.events.shift();
        entry.lastSeenAt = now();
        entry.applied = undefined;
        seen.set(id, entry);
      }
    },

    sweep() {
      const at = now();
      const horizon = at - options.overlayRetentionMs;
      for (const [id, entry] of seen) if (entry.lastSeenAt < horizon) seen.delete(id);
      for (const [id, entry] of cache) if (entry.expires <= at) cache.delete(id);
    },

    close: () => store.close(),
  };
}
