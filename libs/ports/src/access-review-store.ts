import type { StoredAccessReview } from '@rsd/domain';
import type { OutboxEntry } from './outbox';

/** Where a page of an organization's reviews ends: the last review's start and id. */
export interface AccessReviewPosition {
  createdAt: string;
  reviewId: string;
}

/**
 * Decision 54's access reviews, kept beside the grants and sharing their outbox (the relay publishes
 * their events too): created once, changed at a revision, each record the fold of its events.
 */
export interface AccessReviewStore {
  createReview(review: StoredAccessReview, outbox: readonly OutboxEntry[]): Promise<void>;
  /** Writes only if the stored revision is still `expectedRevision`; false means another change won. */
  updateReview(review: StoredAccessReview, expectedRevision: number, outbox: readonly OutboxEntry[]): Promise<boolean>;
  /** The organization's review; another organization's is not found. */
  findReview(organizationId: string, reviewId: string): Promise<StoredAccessReview | undefined>;
  /** Newest first (by `createdAt`, then id, descending), strictly beyond `after`, through an index. */
  listReviews(organizationId: string, page: { limit: number; after?: AccessReviewPosition }): Promise<StoredAccessReview[]>;
  /** Open reviews whose next work (`nextAccessReviewWorkAt`) is at or before `now`, earliest first, through an index. */
  findReviewsDue(now: Date, limit: number): Promise<StoredAccessReview[]>;
}
