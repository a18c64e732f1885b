import { randomUUID } from 'node:crypto';
import {
  ApiError,
  attemptOnce,
  drainDue,
  leaderPasses,
  publishOwedEvents,
  runCommand,
  type ScheduledWork,
  type SchedulerDeps,
} from '@rsd/platform';
import {
  ACCESS_REVIEW_SYSTEM_ORIGIN,
  accessReviewDueSoon,
  itemsToRevoke,
  settleOverdueAccessReview,
  type StoredAccessReview,
} from '@rsd/domain';
import { revokeCommand } from '../authorizations/revoke-authorization';

export interface AccessReviewScheduler extends ScheduledWork {
  /** One pass over the reviews that fall due; resolves to how many it changed. */
  runOnce(): Promise<number>;
}

const PAGE_SIZE = 50;

/**
 * Decision 54: each open review's `access_review.due_soon` alert 3 days before its due time, then at
 * its due time its undecided items kept or revoked as `onOverdue` says, by the system, and the grants
 * decided `revoke` revoked (`revocationReason: "access_review"`). At most one interval late: within a
 * minute with the default interval.
 */
export function createAccessReviewScheduler(deps: SchedulerDeps): AccessReviewScheduler {
  const { store, relay, clock, log, newEventId = randomUUID } = deps;

  async function runOnce(): Promise<number> {
    const now = clock.now();
    const due = (limit: number) => store.findReviewsDue(now, limit);
    const changed = await drainDue(PAGE_SIZE, due, (review) => settle(review, now));
    if (changed > 0) {
      log.info({ reviews: changed }, 'access reviews fell due');
      await publishOwedEvents(relay, log);
    }
    return changed;
  }

  /**
   * One attempt on the review as the page found it: a lost race is found again by the next pass. At
   * the due time the grants decided `revoke` are revoked first, then the review is written completed:
   * a review is never completed with a grant it revokes still active, and should the process stop
   * between the two, the next pass does it again (revoking again changes nothing). No reviewer decides
   * past the due time, so the review the pass read is the one it completes.
   */
  async function settle(review: StoredAccessReview, now: Date): Promise<boolean> {
    const stamps = () => ({ id: newEventId(), time: now });
    const noticed = accessReviewDueSoon(review, now, stamps());
    const settled = noticed ? undefined : settleOverdueAccessReview(review, now, stamps);
    const change = noticed ?? settled;
    if (!change) return false;
    if (settled) await revokeDecided(settled.record, now);
    // The due-soon alert is no one's change; the overdue decisions are the system's.
    return attemptOnce(deps, noticed ? undefined : ACCESS_REVIEW_SYSTEM_ORIGIN, review, {
      what: noticed ? 'access review due-soon alert' : 'access review due',
      context: { reviewId: review.reviewId },
      decide: () => ({ write: { review: change.record, expectedRevision: review.revision, events: change.events }, answer: true }),
    });
  }

  /** Every grant the review decided to revoke (again where a reviewer's revoke was made: it changes nothing then). */
  async function revokeDecided(review: StoredAccessReview, now: Date): Promise<void> {
    const atNow = { store, clock: { now: () => now }, newEventId };
    for (const clientId of itemsToRevoke(review)) {
      try {
        await runCommand(deps, ACCESS_REVIEW_SYSTEM_ORIGIN, {
          ...revokeCommand(atNow, review.organizationId, clientId, 'access_review'),
          publish: 'none',
        });
      } catch (error) {
        // A grant no longer kept has nothing left to revoke; anything else fails the pass, which the next one repeats.
        if (!(error instanceof ApiError && error.code === 'AUTHORIZATION_NOT_FOUND')) throw error;
      }
    }
  }

  // Only the leader's pass runs: two would each settle and announce the same review.
  return { runOnce, ...leaderPasses(runOnce, { name: 'the access-review check', log, isLeader: deps.isLeader }) };
}
