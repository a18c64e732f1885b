import type { AuthorizationStatus, CalculatedScore } from '@rsd/contracts';
import { supersedes, type CredentialView, type CredentialViews, type ReadViews, type ScoreViews } from '@rsd/ports';

/**
 * The read API's views held in memory. Embedded views are rebuilt from offset zero at every start,
 * so nothing here is persisted. Values are copied and deep-frozen on the way in and handed out as they
 * are: callers cannot change the store, and the read path (every API request) copies nothing.
 */
export function createMemoryReadViews(): ReadViews {
  return {
    credentials: memoryCredentialViews(),
    scores: memoryScoreViews(),
    close: () => Promise.resolve(),
  };
}

function memoryCredentialViews(): CredentialViews {
  const views = new Map<string, CredentialView>();

  return {
    get(clientId) {
      const view = views.get(clientId);
      return Promise.resolve(view);
    },

    put(view) {
      const stored = views.get(view.clientId);
      if (!stored || stored.revision < view.revision) views.set(view.clientId, frozenCopy(view));
      return Promise.resolve();
    },

    setStatus(clientId: string, status: AuthorizationStatus, revision: number) {
      const stored = views.get(clientId);
      if (stored && stored.revision < revision) views.set(clientId, Object.freeze({ ...stored, status, revision }));
      return Promise.resolve();
    },
  };
}

interface OrganizationScores {
  latest: CalculatedScore | undefined;
  /** scoreDate → the latest calculation for that date. */
  byDate: Map<string, CalculatedScore>;
}

function memoryScoreViews(): ScoreViews {
  const byOrganization = new Map<string, OrganizationScores>();

  function scoresOf(organizationId: string): OrganizationScores {
    let scores = byOrganization.get(organizationId);
    if (!scores) {
      scores = { latest: undefined, byDate: new Map() };
      byOrganization.set(organizationId, scores);
    }
    return scores;
  }

  return {
    record(score) {
      const scores = scoresOf(score.organizationId);
      const copy = frozenCopy(score);
      if (supersedes(copy, scores.byDate.get(copy.scoreDate))) scores.byDate.set(copy.scoreDate, copy);
      if (supersedes(copy, scores.latest)) scores.latest = copy;
      return Promise.resolve();
    },

    latest(organizationId) {
      const latest = byOrganization.get(organizationId)?.latest;
      return Promise.resolve(latest);
    },

    history(organizationId, limit) {
      const byDate = byOrganization.get(organizationId)?.byDate;
      if (!byDate || limit <= 0) return Promise.resolve([]);
      // ISO dates order correctly as plain strings.
      const newestFirst = [...byDate.values()].sort((a, b) => (a.scoreDate < b.scoreDate ? 1 : -1));
      return Promise.resolve(newestFirst.slice(0, limit));
    },
  };
}

function frozenCopy<T extends object>(value: T): T {
  const copy = structuredClone(value);
  for (const nested of Object.values(copy)) if (typeof nested === 'object' && nested !== null) Object.freeze(nested);
  return Object.freeze(copy);
}
