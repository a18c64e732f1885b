import type { Db } from 'mongodb';
import type { CalculatedScore } from '@rsd/contracts';
import type { CredentialView, CredentialViews, ReadViews, ScoreViews } from '@rsd/ports';
import { ignoringDuplicateKey } from './duplicate-key';

export const VIEW_COLLECTIONS = {
  credentials: 'credential_views',
  latestScores: 'latest_scores',
  history: 'score_history',
} as const;

interface CredentialViewDocument extends CredentialView {
  /** The Client ID. */
  _id: string;
}

interface ScoreDocument extends CalculatedScore {
  /** The organization for the latest score; `${organizationId}|${scoreDate}` in history. */
  _id: string;
}

const CREDENTIAL_PROJECTION = {
  _id: 0,
  clientId: 1,
  organizationId: 1,
  keyDigest: 1,
  scopes: 1,
  status: 1,
  expiresAt: 1,
  revision: 1,
} as const;

const SCORE_PROJECTION = {
  _id: 0,
  organizationId: 1,
  scoreDate: 1,
  score: 1,
  grade: 1,
  pillarScores: 1,
  calculatedAt: 1,
} as const;

/**
 * The read API's views on MongoDB (or FerretDB). Every write is one conditional upsert whose filter
 * is the guard: if a same-or-newer version is stored the filter misses, the upsert's insert clashes
 * on `_id` (E11000), and that clash is the "ignore". Duplicates and replays therefore change nothing.
 * The views are replaced whole, so nothing of an older shape lingers. `close` leaves the client to
 * its owner.
 */
export async function openMongoReadViews(db: Db): Promise<ReadViews> {
  await db.collection<ScoreDocument>(VIEW_COLLECTIONS.history).createIndexes([{ key: { organizationId: 1, scoreDate: -1 } }]);
  return {
    credentials: mongoCredentialViews(db),
    scores: mongoScoreViews(db),
    close: () => Promise.resolve(),
  };
}

function mongoCredentialViews(db: Db): CredentialViews {
  const views = db.collection<CredentialViewDocument>(VIEW_COLLECTIONS.credentials);

  return {
    async get(clientId) {
      // On the request path, so by `_id` alone: the one filter FerretDB 1.24 hands down to SQLite.
      const view = await views.findOne<CredentialView>({ _id: clientId }, { projection: CREDENTIAL_PROJECTION });
      return view ?? undefined;
    },

    put(view) {
      return ignoringDuplicateKey(
        views.replaceOne({ _id: view.clientId, revision: { $lt: view.revision } }, credentialViewOf(view), { upsert: true }),
      );
    },

    async setStatus(clientId, status, revision) {
      await views.updateOne({ _id: clientId, revision: { $lt: revision } }, { $set: { status, revision } });
    },
  };
}

function mongoScoreViews(db: Db): ScoreViews {
  const latest = db.collection<ScoreDocument>(VIEW_COLLECTIONS.latestScores);
  const history = db.collection<ScoreDocument>(VIEW_COLLECTIONS.history);

  return {
    /**
     * The guards are `supersedes` from @rsd/ports written as filters: instants are UTC with
     * milliseconds and `Z` (the contract's schema), so comparing them as strings is comparing times.
     */
    async record(score) {
      const stored = scoreOf(score);
      await ignoringDuplicateKey(
        history.replaceOne({ _id: `${score.organizationId}|${score.scoreDate}`, calculatedAt: { $lt: score.calculatedAt } }, stored, {
          upsert: true,
        }),
      );
      await ignoringDuplicateKey(
        latest.replaceOne(
          {
            _id: score.organizationId,
            $or: [{ scoreDate: { $lt: score.scoreDate } }, { scoreDate: score.scoreDate, calculatedAt: { $lt: score.calculatedAt } }],
          },
          stored,
          { upsert: true },
        ),
      );
    },

    async latest(organizationId) {
      const found = await latest.findOne<CalculatedScore>({ _id: organizationId }, { projection: SCORE_PROJECTION });
      return found ?? undefined;
    },

    async history(organizationId, limit) {
      if (limit <= 0) return [];
      return history.find<CalculatedScore>({ organizationId }, { projection: SCORE_PROJECTION, sort: { scoreDate: -1 }, limit }).toArray();
    },
  };
}

/** Exactly the port's fields, whatever else the input carries. */
function credentialViewOf(view: CredentialView): CredentialView {
  return {
    clientId: view.clientId,
    organizationId: view.organizationId,
    keyDigest: view.keyDigest,
    scopes: [...view.scopes],
    status: view.status,
    expiresAt: view.expiresAt,
    revision: view.revision,
  };
}

function scoreOf(score: CalculatedScore): CalculatedScore {
  return {
    organizationId: score.organizationId,
    scoreDate: score.scoreDate,
    score: score.score,
    grade: score.grade,
    pillarScores: { ...score.pillarScores },
    calculatedAt: score.calculatedAt,
  };
}
