import type { Collection, Document } from 'mongodb';
import { nextAccessReviewWorkAt, type StoredAccessReview } from '@rsd/domain';
import type { AccessReviewStore, OutboxEntry } from '@rsd/ports';
import { insertNewOfKind } from './duplicate-key';
import { updateAtRevision, type SoleWriter } from './write-claims';

/**
 * Decision 54: a review is a document of the authorizations' collection, `_id` its review id, so the
 * relay's one outbox query publishes its events too. The record is kept whole under `review`, its
 * query fields beside it under names of their own, so no query of grants (by `organizationId`,
 * `clientId` or a pending expiry) ever finds it.
 */
export interface AccessReviewDocument {
  _id: string;
  kind: 'access-review';
  review: StoredAccessReview;
  revision: number;
  reviewOrganizationId: string;
  reviewCreatedAt: string;
  /** The next work's instant while the review is open, absent once completed (a sparse index). */
  reviewWorkAt?: string;
  /** What the relay's query sorts by, as for the other documents. */
  createdAt: string;
  outbox: OutboxEntry[];
  hasOutbox: boolean;
  /** The store's own write sequence (absent until the first update): see write-claims.ts. */
  writeSeq?: number;
}

/** One index per command, as for the authorizations (FerretDB 1.24). */
export async function indexAccessReviews(collection: Collection<Document>): Promise<void> {
  await collection.createIndex({ reviewOrganizationId: 1, reviewCreatedAt: -1, _id: -1 }, { sparse: true });
  await collection.createIndex({ reviewWorkAt: 1 }, { sparse: true });
}

/**
 * The access reviews' half of the MongoDB authorization store; `write` runs one review's writes one at a
 * time in this process, and `soleWriter` makes each update the one writer of the document's next write
 * across processes (two reviewers deciding at once on two replicas must not lose a decision on FerretDB).
 */
export function mongoAccessReviews(
  collection: Collection<AccessReviewDocument>,
  write: <T>(id: string, task: () => Promise<T>) => Promise<T>,
  soleWriter: SoleWriter,
): AccessReviewStore {
  const fieldsOf = (review: StoredAccessReview) => {
    const workAt = nextAccessReviewWorkAt(review);
    return { review, revision: review.revision, ...(workAt === null ? {} : { reviewWorkAt: workAt }) };
  };
  const reviewsOf = (documents: readonly Pick<AccessReviewDocument, 'review'>[]) => documents.map((document) => document.review);
  return {
    createReview(review, outbox) {
      const fields = { ...fieldsOf(review), reviewOrganizationId: review.organizationId, reviewCreatedAt: review.createdAt };
      const document = { id: review.reviewId, kind: 'access-review', what: 'access review' };
      return write(review.reviewId, () => insertNewOfKind(collection, document, { ...fields, createdAt: review.createdAt }, outbox));
    },

    updateReview(review, expectedRevision, outbox) {
      return write(review.reviewId, async () => {
        const fields = fieldsOf(review);
        return updateAtRevision(
          soleWriter,
          collection,
          { id: review.reviewId, match: { kind: 'access-review' }, expectedRevision, outbox },
          { $set: fields, ...('reviewWorkAt' in fields ? {} : { $unset: { reviewWorkAt: '' } }) },
        );
      });
    },

    async findReview(organizationId, reviewId) {
      const found = await collection.findOne({ _id: reviewId, kind: 'access-review' }, { projection: { review: 1 } });
      return found?.review.organizationId === organizationId ? found.review : undefined;
    },

    async listReviews(organizationId, { limit, after }) {
      if (limit <= 0) return [];
      // Two queries rather than an `$or` (FerretDB 1.24 would evaluate one over the whole collection):
      // the rest of the instant `after` ends at, then what is older.
      const found: Pick<AccessReviewDocument, 'review'>[] = [];
      if (after) {
        found.push(
          ...(await collection
            .find(
              { reviewOrganizationId: organizationId, reviewCreatedAt: after.createdAt, _id: { $lt: after.reviewId } },
              { projection: { review: 1 }, sort: { reviewCreatedAt: -1, _id: -1 }, limit },
            )
            .toArray()),
        );
      }
      if (found.length < limit) {
        found.push(
          ...(await collection
            .find(
              { reviewOrganizationId: organizationId, ...(after ? { reviewCreatedAt: { $lt: after.createdAt } } : {}) },
              { projection: { review: 1 }, sort: { reviewCreatedAt: -1, _id: -1 }, limit: limit - found.length },
            )
            .toArray()),
        );
      }
      return reviewsOf(found);
    },

    async findReviewsDue(now, limit) {
      if (limit <= 0) return [];
      const found = await collection
        .find({ reviewWorkAt: { $lte: now.toISOString() } }, { projection: { review: 1 }, sort: { reviewWorkAt: 1, _id: 1 }, limit })
        .toArray();
      return reviewsOf(found);
    },
  };
}
