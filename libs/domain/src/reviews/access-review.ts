import {
  EVENT_TYPES,
  accessReviewCompletedSchema,
  accessReviewCreatedSchema,
  accessReviewDueSoonSchema,
  accessReviewItemDecidedSchema,
  type AccessReview,
  type AccessReviewDecision,
  type AccessReviewEvent,
  type AccessReviewItem,
  type AccessReviewProgress,
  type AccessReviewReport,
  type AccessReviewStatus,
  type AccessReviewSummary,
  type AuditActor,
} from '@rsd/contracts';
import { statusOf, type StoredAuthorization } from '../authorizations/authorization-record';
import { checkedEvent, type EventStamp } from '../authorizations/authorization-events';
import type { Origin } from '../audit/audit-trail';
import { viewEvents, type ViewDefinition } from '../views/view';

/*
 * Decision 54's access reviews, without I/O. A review is the fold of its events (`accessReviewView`):
 * every decider here answers the events of a change and the record they make, so the stored record is
 * always what its events in the log make of it, and can be made again from them.
 */

/** How long before its due time a review's `access_review.due_soon` alert is raised. */
export const ACCESS_REVIEW_DUE_SOON_MS = 3 * 24 * 60 * 60 * 1000;

/** The system's own decisions on overdue items: it acts on no request. */
export const ACCESS_REVIEW_SYSTEM_ORIGIN: Origin = {
  actor: { type: 'system', id: 'access-review-scheduler', via: null },
  requestId: null,
  address: null,
};

export interface StoredAccessReview {
  reviewId: string;
  organizationId: string;
  createdAt: string;
  createdBy: AuditActor;
  dueAt: string;
  onOverdue: AccessReviewDecision;
  status: AccessReviewStatus;
  completedAt: string | null;
  /** When its due-soon alert was raised; null until then. */
  dueSoonAt: string | null;
  /** In Client ID order. */
  items: AccessReviewItem[];
  /** The number of its events: each event carries the revision it makes. */
  revision: number;
}

const byClientId = (a: { clientId: string }, b: { clientId: string }) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0);

/**
 * The review as its events make it. An event whose revision is not the next one (a duplicate, a
 * replay) changes nothing, so the fold is the same however often the log delivers an event.
 */
export const accessReviewView: ViewDefinition<StoredAccessReview> = {
  name: 'access_reviews',
  ...viewEvents<StoredAccessReview>()({
    keyOf: (event) => event.data.reviewId,
    on: {
      [EVENT_TYPES.accessReviewCreated]: (state, { data }) =>
        state ?? {
          reviewId: data.reviewId,
          organizationId: data.organizationId,
          createdAt: data.createdAt,
          createdBy: { ...data.createdBy },
          dueAt: data.dueAt,
          onOverdue: data.onOverdue,
          status: 'open',
          completedAt: null,
          dueSoonAt: null,
          items: data.items
            .map((item) => ({
              ...item,
              scopes: [...item.scopes],
              decision: null,
              note: null,
              decidedAt: null,
              decidedBy: null,
              overdue: false,
            }))
            .sort(byClientId),
          revision: data.revision,
        },
      [EVENT_TYPES.accessReviewItemDecided]: (state, { data }) =>
        !state || data.revision !== state.revision + 1
          ? state
          : {
              ...state,
              items: state.items.map((item) =>
                item.clientId !== data.clientId
                  ? item
                  : {
                      ...item,
                      decision: data.decision,
                      note: data.note,
                      decidedAt: data.decidedAt,
                      decidedBy: { ...data.decidedBy },
                      overdue: data.overdue,
                    },
              ),
              revision: data.revision,
            },
      [EVENT_TYPES.accessReviewCompleted]: (state, { data }) =>
        !state || data.revision !== state.revision + 1
          ? state
          : { ...state, status: 'completed', completedAt: data.completedAt, revision: data.revision },
      [EVENT_TYPES.accessReviewDueSoon]: (state, { data }) =>
        !state || data.revision !== state.revision + 1 ? state : { ...state, dueSoonAt: data.at, revision: data.revision },
    },
  }),
  versionOf: (state) => String(state.revision).padStart(12, '0'),
};

/** The record after `events`, in order. */
export function foldAccessReview(state: StoredAccessReview | undefined, events: readonly AccessReviewEvent[]): StoredAccessReview {
  const folded = events.reduce<StoredAccessReview | undefined>((current, event) => accessReviewView.evolve(current, event), state);
  if (!folded) throw new Error('an access review begins with its created event');
  return folded;
}

/** A change of a review: its events, and the record they make. */
export interface ReviewChange {
  record: StoredAccessReview;
  events: AccessReviewEvent[];
}

/** A due time must be an instant after now (decision 54: any future time). */
export function dueAtProblem(dueAt: Date, now: Date): string | undefined {
  return dueAt.getTime() > now.getTime() ? undefined : 'must be in the future';
}

/** Every grant active at the stamp's time becomes an item, as it stands then. */
export function startAccessReview(
  review: { reviewId: string; organizationId: string; dueAt: Date; onOverdue: AccessReviewDecision },
  grants: readonly StoredAuthorization[],
  origin: Origin,
  stamp: EventStamp,
): ReviewChange {
  const items = grants
    .filter((grant) => grant.organizationId === review.organizationId && statusOf(grant, stamp.time) === 'active')
    .map((grant) => ({
      clientId: grant.clientId,
      recipientType: grant.recipientType,
      recipientName: grant.recipientName,
      scopes: [...grant.scopes],
    }))
    .sort(byClientId);
  const created = checkedEvent(accessReviewCreatedSchema, stamp, EVENT_TYPES.accessReviewCreated, {
    reviewId: review.reviewId,
    organizationId: review.organizationId,
    createdAt: stamp.time.toISOString(),
    createdBy: { ...origin.actor },
    dueAt: review.dueAt.toISOString(),
    onOverdue: review.onOverdue,
    items,
    revision: 1,
  });
  return { record: foldAccessReview(undefined, [created]), events: [created] };
}

/** Why a decision on an item is refused. */
export type ItemRefusal = 'review_completed' | 'review_due' | 'item_not_found' | 'item_decided';

/**
 * A reviewer's decision on one item: refused on a completed review or one past its due time (the due
 * time settles what is left, so nothing races it), for a grant that is no item of it, and for an item
 * decided already (a decision stands). The last item decided completes the review.
 */
export function decideAccessReviewItem(
  review: StoredAccessReview,
  clientId: string,
  choice: { decision: AccessReviewDecision; note: string | null },
  origin: Origin,
  stamps: () => EventStamp,
): { outcome: 'refused'; reason: ItemRefusal } | ({ outcome: 'changed' } & ReviewChange) {
  if (review.status === 'completed') return { outcome: 'refused', reason: 'review_completed' };
  const item = review.items.find((candidate) => candidate.clientId === clientId);
  if (!item) return { outcome: 'refused', reason: 'item_not_found' };
  if (item.decision !== null) return { outcome: 'refused', reason: 'item_decided' };
  const stamp = stamps();
  if (stamp.time.getTime() >= Date.parse(review.dueAt)) return { outcome: 'refused', reason: 'review_due' };
  const decided = itemDecided(review, review.revision + 1, { clientId, ...choice, actor: origin.actor, overdue: false }, stamp);
  const change = withCompletion(foldAccessReview(review, [decided]), [decided], stamps);
  return { outcome: 'changed', ...change };
}

/**
 * At its due time, an open review's undecided items are decided by `onOverdue` (by the system), and
 * the review completes; undefined before then, or once completed.
 */
export function settleOverdueAccessReview(review: StoredAccessReview, now: Date, stamps: () => EventStamp): ReviewChange | undefined {
  if (review.status === 'completed' || now.getTime() < Date.parse(review.dueAt)) return undefined;
  const events: AccessReviewEvent[] = [];
  let revision = review.revision;
  for (const item of review.items) {
    if (item.decision !== null) continue;
    revision += 1;
    const choice = {
      clientId: item.clientId,
      decision: review.onOverdue,
      note: null,
      actor: ACCESS_REVIEW_SYSTEM_ORIGIN.actor,
      overdue: true,
    };
    events.push(itemDecided(review, revision, choice, stamps()));
  }
  return withCompletion(foldAccessReview(review, events), events, stamps);
}

/** The `access_review.due_soon` alert, once, within 3 days of an open review's due time. */
export function accessReviewDueSoon(review: StoredAccessReview, now: Date, stamp: EventStamp): ReviewChange | undefined {
  const due = Date.parse(review.dueAt);
  if (review.status !== 'open' || review.dueSoonAt !== null || now.getTime() < due - ACCESS_REVIEW_DUE_SOON_MS || now.getTime() >= due) {
    return undefined;
  }
  const event = checkedEvent(accessReviewDueSoonSchema, stamp, EVENT_TYPES.accessReviewDueSoon, {
    reviewId: review.reviewId,
    organizationId: review.organizationId,
    dueAt: review.dueAt,
    at: stamp.time.toISOString(),
    pending: progressOf(review).pending,
    revision: review.revision + 1,
  });
  return { record: foldAccessReview(review, [event]), events: [event] };
}

/**
 * When the scheduler must next look at the review: its due-soon alert's time until raised, then its
 * due time; null once completed. Stores index it, so the scheduler reads only what is due.
 */
export function nextAccessReviewWorkAt(review: StoredAccessReview): string | null {
  if (review.status === 'completed') return null;
  if (review.dueSoonAt === null) return new Date(Date.parse(review.dueAt) - ACCESS_REVIEW_DUE_SOON_MS).toISOString();
  return review.dueAt;
}

/** The grants a review has ended or must end: every item decided `revoke` (revoking again changes nothing). */
export function itemsToRevoke(review: StoredAccessReview): string[] {
  return review.items.filter((item) => item.decision === 'revoke').map((item) => item.clientId);
}

export function progressOf(review: Pick<StoredAccessReview, 'items'>): AccessReviewProgress {
  const kept = review.items.filter((item) => item.decision === 'keep').length;
  const revoked = review.items.filter((item) => item.decision === 'revoke').length;
  const total = review.items.length;
  return { total, decided: kept + revoked, kept, revoked, pending: total - kept - revoked };
}

/** What a list shows of a review. */
export function toAccessReviewSummary(review: StoredAccessReview): AccessReviewSummary {
  const { reviewId, organizationId, createdAt, createdBy, dueAt, onOverdue, status, completedAt } = review;
  return {
    reviewId,
    organizationId,
    createdAt,
    createdBy: { ...createdBy },
    dueAt,
    onOverdue,
    status,
    completedAt,
    progress: progressOf(review),
  };
}

export function toAccessReview(review: StoredAccessReview): AccessReview {
  return { ...toAccessReviewSummary(review), items: review.items.map((item) => ({ ...item, scopes: [...item.scopes] })) };
}

/** What the report says of each grant's use: its last read, and its reads in the review's period. */
export interface ReviewedUse {
  lastUsedAt: string | null;
  readsInPeriod: number;
}

/** The reads a report counts: from the review's start to its end, or to the report while it is open. */
export function reportPeriodOf(review: StoredAccessReview, issuedAt: Date): { from: string; to: string } {
  return { from: review.createdAt, to: review.completedAt ?? issuedAt.toISOString() };
}

/** The report (decision 54): the review, and each grant with its use, its decision, who and when. */
export function accessReviewReportOf(
  review: StoredAccessReview,
  useOf: (clientId: string) => ReviewedUse,
  issuedAt: Date,
): AccessReviewReport {
  const summary = toAccessReviewSummary(review);
  return {
    ...summary,
    period: reportPeriodOf(review, issuedAt),
    issuedAt: issuedAt.toISOString(),
    items: review.items.map((item) => ({ ...item, scopes: [...item.scopes], ...useOf(item.clientId) })),
  };
}

function itemDecided(
  review: StoredAccessReview,
  revision: number,
  choice: { clientId: string; decision: AccessReviewDecision; note: string | null; actor: AuditActor; overdue: boolean },
  stamp: EventStamp,
) {
  return checkedEvent(accessReviewItemDecidedSchema, stamp, EVENT_TYPES.accessReviewItemDecided, {
    reviewId: review.reviewId,
    organizationId: review.organizationId,
    clientId: choice.clientId,
    decision: choice.decision,
    note: choice.note,
    decidedAt: stamp.time.toISOString(),
    decidedBy: { ...choice.actor },
    overdue: choice.overdue,
    revision,
  });
}

/** The review with its completion when no item is left undecided. */
function withCompletion(review: StoredAccessReview, events: AccessReviewEvent[], stamps: () => EventStamp): ReviewChange {
  const progress = progressOf(review);
  if (review.status === 'completed' || progress.pending > 0) return { record: review, events };
  const stamp = stamps();
  const completed = checkedEvent(accessReviewCompletedSchema, stamp, EVENT_TYPES.accessReviewCompleted, {
    reviewId: review.reviewId,
    organizationId: review.organizationId,
    completedAt: stamp.time.toISOString(),
    kept: progress.kept,
    revoked: progress.revoked,
    revision: review.revision + 1,
  });
  return { record: foldAccessReview(review, [completed]), events: [...events, completed] };
}
