import {
  accessReviewItemDecisionRequestSchema,
  createAccessReviewRequestSchema,
  type AccessReview,
  type AccessReviewReport,
  type AccessReviewSummary,
} from '@rsd/contracts';
import {
  accessReviewReportOf,
  decideAccessReviewItem,
  dueAtProblem,
  generateAccessReviewId,
  startAccessReview,
  toAccessReview,
  toAccessReviewSummary,
  type ItemRefusal,
  type Origin,
  type StoredAccessReview,
} from '@rsd/domain';
import { ApiError, pageOf, parsedBody, runCommand, validationFailed } from '@rsd/platform';
import type { AccessLogStore, AccessReviewPosition } from '@rsd/ports';
import { revokeAuthorization } from '../authorizations/revoke-authorization';
import type { UseCaseDeps } from '../authorizations/use-case-deps';

/*
 * Decision 54's access reviews: each use case loads, lets the domain decide (libs/domain), and writes
 * through the command runner, which stamps who asked into the review's events.
 */

export type ReviewDeps = UseCaseDeps & { origin: Origin };

/** Every grant active now becomes an item; `dueAt` any future instant. */
export async function createAccessReview(deps: ReviewDeps, organizationId: string, body: unknown): Promise<AccessReviewSummary> {
  const request = parsedBody(createAccessReviewRequestSchema, body);
  const now = deps.clock.now();
  const dueAt = new Date(request.dueAt);
  const problem = dueAtProblem(dueAt, now);
  if (problem) throw validationFailed([{ path: 'dueAt', message: problem }]);
  const { answer } = await runCommand(deps, deps.origin, {
    what: 'create an access review',
    context: { organizationId },
    load: () => deps.store.list(organizationId),
    decide: (grants) => {
      const review = { reviewId: generateAccessReviewId(), organizationId, dueAt, onOverdue: request.onOverdue };
      const started = startAccessReview(review, grants, deps.origin, { id: deps.newEventId(), time: now });
      return { write: { review: started.record, expectedRevision: null, events: started.events }, answer: started.record };
    },
  });
  return toAccessReviewSummary(answer);
}

const REFUSALS: Record<ItemRefusal, () => ApiError> = {
  review_completed: () => new ApiError('ACCESS_REVIEW_COMPLETED', 'The review is completed: its decisions stand'),
  review_due: () =>
    new ApiError('ACCESS_REVIEW_COMPLETED', 'The review is past its due time: what is undecided is settled by its onOverdue'),
  item_not_found: () => new ApiError('ACCESS_REVIEW_ITEM_NOT_FOUND', 'No such grant in this review'),
  item_decided: () => new ApiError('ACCESS_REVIEW_ITEM_DECIDED', 'The item is decided already: a decision stands'),
};

/**
 * A reviewer keeps or revokes one item. A revoke is then made through the grant's own revoke path
 * (`revocationReason: "access_review"`, its event, webhooks and trail as for any revocation); the
 * review's write comes first, so an item is never decided twice. Should the process stop between the
 * two, the grant stays active with its item decided `revoke` (the organization revokes it by hand).
 */
export async function decideAccessReviewItemFor(
  deps: ReviewDeps,
  target: { organizationId: string; reviewId: string; clientId: string },
  body: unknown,
): Promise<AccessReview> {
  const request = parsedBody(accessReviewItemDecisionRequestSchema, body);
  const choice = { decision: request.decision, note: request.note ?? null };
  const { answer } = await runCommand(deps, deps.origin, {
    what: 'decide an access review item',
    context: target,
    publish: choice.decision === 'revoke' ? 'none' : 'deadline',
    load: () => findOwnReview(deps, target.organizationId, target.reviewId),
    decide: (review) => {
      const decided = decideAccessReviewItem(review, target.clientId, choice, deps.origin, () => ({
        id: deps.newEventId(),
        time: deps.clock.now(),
      }));
      if (decided.outcome === 'refused') throw REFUSALS[decided.reason]();
      return { write: { review: decided.record, expectedRevision: review.revision, events: decided.events }, answer: decided.record };
    },
  });
  if (choice.decision === 'revoke') await revokeAuthorization(deps, target.organizationId, target.clientId, 'access_review');
  return toAccessReview(answer);
}

/** Another organization's review answers exactly like an unknown one. */
export async function findOwnReview(
  deps: Pick<UseCaseDeps, 'store'>,
  organizationId: string,
  reviewId: string,
): Promise<StoredAccessReview> {
  const review = await deps.store.findReview(organizationId, reviewId);
  if (!review) throw new ApiError('ACCESS_REVIEW_NOT_FOUND', `No access review ${reviewId} in organization ${organizationId}`);
  return review;
}

export async function getAccessReview(deps: Pick<UseCaseDeps, 'store'>, organizationId: string, reviewId: string): Promise<AccessReview> {
  return toAccessReview(await findOwnReview(deps, organizationId, reviewId));
}

/** A page of the organization's reviews, newest first; one more than the page says whether another follows. */
export async function listAccessReviews(
  deps: Pick<UseCaseDeps, 'store'>,
  organizationId: string,
  page: { limit: number; after?: AccessReviewPosition },
): Promise<{ items: AccessReviewSummary[]; next: AccessReviewPosition | undefined }> {
  const { items, next } = pageOf(await deps.store.listReviews(organizationId, { ...page, limit: page.limit + 1 }), page.limit);
  return { items: items.map(toAccessReviewSummary), next: next && { createdAt: next.createdAt, reviewId: next.reviewId } };
}

/**
 * The report: each grant with its last successful read and its reads within the review's period
 * (from its start to its end, or to now while open; counted by the hour, as the usage counters keep them).
 */
export async function accessReviewReport(
  deps: Pick<UseCaseDeps, 'store' | 'clock'> & { accessLog: Pick<AccessLogStore, 'usage' | 'dailyReads'> },
  organizationId: string,
  reviewId: string,
): Promise<AccessReviewReport> {
  const review = await findOwnReview(deps, organizationId, reviewId);
  const issuedAt = deps.clock.now();
  const clientIds = review.items.map((item) => item.clientId);
  const usage = await deps.accessLog.usage(clientIds, issuedAt);
  const from = new Date(review.createdAt);
  const to = new Date(review.completedAt ?? issuedAt.toISOString());
  const reads = new Map<string, number>();
  for (const clientId of clientIds) {
    const days = await deps.accessLog.dailyReads(clientId, from, new Date(to.getTime() + 1));
    reads.set(
      clientId,
      days.reduce((sum, day) => sum + day.reads, 0),
    );
  }
  return accessReviewReportOf(
    review,
    (clientId) => ({ lastUsedAt: usage.get(clientId)?.lastUsedAt ?? null, readsInPeriod: reads.get(clientId) ?? 0 }),
    issuedAt,
  );
}
