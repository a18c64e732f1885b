import type { StatementSync } from 'node:sqlite';
import { nextAccessReviewWorkAt, type StoredAccessReview } from '@rsd/domain';
import type { AccessReviewStore, OutboxEntry } from '@rsd/ports';
import { text } from './database';

/** The reviews' reads, named so that a test can check that each one goes through an index. */
export const REVIEW_QUERIES = {
  find: 'SELECT record FROM access_reviews WHERE review_id = ? AND organization_id = ?',
  list: `SELECT record FROM access_reviews WHERE organization_id = ? AND (created_at, review_id) < (?, ?)
    ORDER BY created_at DESC, review_id DESC LIMIT ?`,
  due: 'SELECT record FROM access_reviews WHERE work_ms IS NOT NULL AND work_ms <= ? ORDER BY work_ms, review_id LIMIT ?',
} as const;

/** Decision 54: a row per review, its next work time indexed for the scheduler (null once completed). */
export function createAccessReviewTables(db: { exec(sql: string): void }): void {
  db.exec(`CREATE TABLE IF NOT EXISTS access_reviews (
    review_id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, created_at TEXT NOT NULL, revision INTEGER NOT NULL,
    work_ms INTEGER, record TEXT NOT NULL
  ) WITHOUT ROWID`);
  db.exec('CREATE INDEX IF NOT EXISTS access_reviews_by_organization ON access_reviews (organization_id, created_at DESC, review_id DESC)');
  db.exec('CREATE INDEX IF NOT EXISTS access_reviews_due ON access_reviews (work_ms, review_id) WHERE work_ms IS NOT NULL');
}

interface Database {
  statement: (sql: string) => StatementSync;
  read: <T>(work: () => T) => Promise<T>;
  write: <T>(change: () => T) => Promise<T>;
  /** Writes the review's events to the shared outbox, in the same transaction. */
  addToOutbox: (statement: (sql: string) => StatementSync, ownerId: string, entries: readonly OutboxEntry[]) => void;
}

/** The access reviews' half of the embedded authorization store. */
export function sqliteAccessReviews({ statement, read, write, addToOutbox }: Database): AccessReviewStore {
  const reviews = (rows: Record<string, unknown>[]) => rows.map((row) => JSON.parse(text(row.record)) as StoredAccessReview);
  const workMs = (review: StoredAccessReview) => {
    const at = nextAccessReviewWorkAt(review);
    return at === null ? null : Date.parse(at);
  };
  return {
    createReview(review, outbox) {
      return write(() => {
        const { changes } = statement(
          `INSERT INTO access_reviews (review_id, organization_id, created_at, revision, work_ms, record)
             VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (review_id) DO NOTHING`,
        ).run(review.reviewId, review.organizationId, review.createdAt, review.revision, workMs(review), JSON.stringify(review));
        if (changes === 0) throw new Error(`access review ${review.reviewId} already exists`);
        addToOutbox(statement, review.reviewId, outbox);
      });
    },

    updateReview(review, expectedRevision, outbox) {
      return write(() => {
        const { changes } = statement(
          'UPDATE access_reviews SET revision = ?, work_ms = ?, record = ? WHERE review_id = ? AND revision = ?',
        ).run(review.revision, workMs(review), JSON.stringify(review), review.reviewId, expectedRevision);
        if (changes === 0) return false;
        addToOutbox(statement, review.reviewId, outbox);
        return true;
      });
    },

    findReview(organizationId, reviewId) {
      return read(() => reviews(statement(REVIEW_QUERIES.find).all(reviewId, organizationId))[0]);
    },

    listReviews(organizationId, { limit, after }) {
      // Every instant and id sorts below "~": no `after` is the whole range.
      return read(() =>
        reviews(statement(REVIEW_QUERIES.list).all(organizationId, after?.createdAt ?? '~', after?.reviewId ?? '~', Math.max(0, limit))),
      );
    },

    findReviewsDue(now, limit) {
      return read(() => reviews(statement(REVIEW_QUERIES.due).all(now.getTime(), Math.max(0, limit))));
    },
  };
}
