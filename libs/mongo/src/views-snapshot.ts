import type { Db, Document } from 'mongodb';
import { VIEW_COLLECTIONS } from './mongo-read-views';

export interface ViewsSnapshot {
  credentials: Document[];
  latestScores: Document[];
  history: Document[];
}

/** Every view document as stored, `_id` included, sorted by `_id`: two databases holding the same views compare equal. */
export async function snapshotViews(db: Db): Promise<ViewsSnapshot> {
  const all = (name: string) =>
    db
      .collection(name)
      .find({}, { sort: { _id: 1 } })
      .toArray();
  const [credentials, latestScores, history] = await Promise.all([
    all(VIEW_COLLECTIONS.credentials),
    all(VIEW_COLLECTIONS.latestScores),
    all(VIEW_COLLECTIONS.history),
  ]);
  return { credentials, latestScores, history };
}
