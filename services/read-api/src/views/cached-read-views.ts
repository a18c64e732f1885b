import type { AuthorizationStatus, CalculatedScore } from '@rsd/contracts';
import { supersedes, type CredentialView, type ReadViews } from '@rsd/ports';

export interface CachedReadViewsOptions {
  /** How long a view read from the shared store is reused. */
  ttlMs: number;
  /** How long changes seen on this replica's own change feed override what the store says. */
  overlayRetentionMs: number;
  maxEntries: number;
  now?: () => number;
}

interface Cached<T> {
  value: T;
  expires: number;
}

interface Seen<T> {
  value: T;
  seenAt: number;
}

/**
 * A read-through cache in front of the shared views (MongoDB), so the request path does no I/O for
 * a credential or score it read recently, plus an overlay of the changes this replica has seen on
 * its own change feed.
 *
 * Why a revoked credential is never served past the feed's latency: the feed writes the revocation
 * into the overlay, and every read (cached or fresh from the store) is merged with the overlay by
 * revision. The overlay outlives any cache entry (retention ≫ ttl), so a stale cached view cannot
 * outlast the change that overrides it; and a view freshly read from a store that has not yet
 * projected the change is overridden all the same.
 *
 * The write methods (put / setStatus / record) feed the overlay only; the shared store is written by
 * the projection consumer, not here.
 */
export function createCachedReadViews(store: ReadViews, options: CachedReadViewsOptions): ReadViews & { sweep(): void } {
  const now = options.now ?? Date.now;
  const credentialCache = new Map<string, Cached<CredentialView | undefined>>();
  const scoreCache = new Map<string, Cached<CalculatedScore | undefined>>();
  const createdSeen = new Map<string, Seen<CredentialView>>();
  const statusSeen = new Map<string, Seen<{ status: AuthorizationStatus; revision: number }>>();
  const latestSeen = new Map<string, Seen<CalculatedScore>>();

  async function readThrough<T>(cache: Map<string, Cached<T>>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = cache.get(key);
    if (hit && hit.expires > now()) return hit.value;
    const value = await load();
    // Bounded memory: the oldest entry makes room (Maps iterate in insertion order).
    if (cache.size >= options.maxEntries) cache.delete(cache.keys().next().value as string);
    cache.set(key, { value, expires: now() + options.ttlMs });
    return value;
  }

  function newer(a: CredentialView | undefined, b: CredentialView | undefined): CredentialView | undefined {
    if (!a) return b;
    if (!b) return a;
    return b.revision > a.revision ? b : a;
  }

  function withSeenChanges(view: CredentialView | undefined, clientId: string): CredentialView | undefined {
    const base = newer(view, createdSeen.get(clientId)?.value);
    const change = statusSeen.get(clientId)?.value;
    if (!base || !change || change.revision <= base.revision) return base ? { ...base } : undefined;
    return { ...base, status: change.status, revision: change.revision };
  }

  return {
    credentials: {
      get: async (clientId) =>
        withSeenChanges(await readThrough(credentialCache, clientId, () => store.credentials.get(clientId)), clientId),
      put: (view) => {
        const seen = createdSeen.get(view.clientId)?.value;
        if (!seen || view.revision > seen.revision) createdSeen.set(view.clientId, { value: { ...view }, seenAt: now() });
        return Promise.resolve();
      },
      setStatus: (clientId, status, revision) => {
        const seen = statusSeen.get(clientId)?.value;
        if (!seen || revision > seen.revision) statusSeen.set(clientId, { value: { status, revision }, seenAt: now() });
        return Promise.resolve();
      },
    },
    scores: {
      latest: async (organizationId) => {
        const stored = await readThrough(scoreCache, organizationId, () => store.scores.latest(organizationId));
        const seen = latestSeen.get(organizationId)?.value;
        return seen && supersedes(seen, stored) ? { ...seen } : stored;
      },
      // History is not on the hot path and its pages vary by limit: read it from the store.
      history: (organizationId, limit) => store.scores.history(organizationId, limit),
      record: (score) => {
        const seen = latestSeen.get(score.organizationId)?.value;
        if (supersedes(score, seen)) latestSeen.set(score.organizationId, { value: { ...score }, seenAt: now() });
        return Promise.resolve();
      },
    },
    sweep: () => {
      const horizon = now() - options.overlayRetentionMs;
      for (const seen of [createdSeen, statusSeen, latestSeen] as Map<string, Seen<unknown>>[]) {
        for (const [key, entry] of seen) if (entry.seenAt < horizon) seen.delete(key);
      }
      const at = now();
      for (const cache of [credentialCache, scoreCache] as Map<string, Cached<unknown>>[]) {
        for (const [key, entry] of cache) if (entry.expires <= at) cache.delete(key);
      }
    },
    close: () => store.close(),
  };
}
