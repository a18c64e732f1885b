import { randomUUID } from 'node:crypto';
import { aStoredAuthorization } from '@rsd/testkit';
import type { AccessReviewEvent } from '@rsd/contracts';
import {
  ACCESS_REVIEW_DUE_SOON_MS,
  accessReviewDueSoon,
  accessReviewReportOf,
  decideAccessReviewItem,
  dueAtProblem,
  foldAccessReview,
  itemsToRevoke,
  nextAccessReviewWorkAt,
  progressOf,
  settleOverdueAccessReview,
  startAccessReview,
  type StoredAccessReview,
} from './access-review';
import type { Origin } from '../audit/audit-trail';

const START = new Date('2026-11-21T08:00:00.000Z');
const DAY = 86_400_000;
const at = (days: number) => new Date(START.getTime() + days * DAY);
const stamps = (time: Date) => () => ({ id: randomUUID(), time });
const ALICE: Origin = {
  actor: { type: 'person', id: 'https://issuer.example|alice', via: 'console' },
  requestId: 'req-1',
  address: '203.0.113.7',
};

/** A review of `active` active grants (and one revoked, one expired, one of another organization), due in 10 days. */
function aReview(active = 3, onOverdue: 'keep' | 'revoke' = 'revoke'): { review: StoredAccessReview; events: AccessReviewEvent[] } {
  const grants = [
    ...Array.from({ length: active }, () => aStoredAuthorization({ organizationId: 'acme' })),
    aStoredAuthorization({ organizationId: 'acme', revokedAt: '2026-11-01T00:00:00.000Z' }),
    aStoredAuthorization({ organizationId: 'acme', expiresAt: '2026-11-20T00:00:00.000Z' }),
    aStoredAuthorization({ organizationId: 'other' }),
  ];
  const started = startAccessReview(
    { reviewId: 'arv_000000000000000000000001', organizationId: 'acme', dueAt: at(10), onOverdue },
    grants,
    ALICE,
    {
      id: randomUUID(),
      time: START,
    },
  );
  return { review: started.record, events: started.events };
}

function decided(review: StoredAccessReview, clientId: string, decision: 'keep' | 'revoke', time = at(1)) {
  const outcome = decideAccessReviewItem(review, clientId, { decision, note: null }, ALICE, stamps(time));
  if (outcome.outcome !== 'changed') throw new Error(`refused: ${outcome.reason}`);
  return outcome;
}

describe('access reviews (decision 54)', () => {
  test('when a review begins, then every grant active then is an item, in Client ID order, and none is decided', () => {
    const { review } = aReview(3);

    expect(review.items).toHaveLength(3);
    expect(review.items.map((item) => item.clientId)).toEqual([...review.items.map((item) => item.clientId)].sort());
    expect(progressOf(review)).toEqual({ total: 3, decided: 0, kept: 0, revoked: 0, pending: 3 });
    expect(review).toMatchObject({ status: 'open', createdBy: ALICE.actor, revision: 1, onOverdue: 'revoke' });
  });

  test('when the due time is now or past, then it is refused; a moment later is accepted', () => {
    expect(dueAtProblem(START, START)).toBe('must be in the future');
    expect(dueAtProblem(at(-1), START)).toBe('must be in the future');
    expect(dueAtProblem(new Date(START.getTime() + 1), START)).toBeUndefined();
  });

  test('when an item is decided, then it records the decision, the reviewer and the time; a second decision, an unknown grant a review past its due time and a completed review are refused', () => {
    const { review } = aReview(2);
    const [first, second] = review.items.map((item) => item.clientId) as [string, string];

    const kept = decided(review, first, 'keep');
    expect(kept.record.items.find((item) => item.clientId === first)).toMatchObject({
      decision: 'keep',
      decidedBy: ALICE.actor,
      decidedAt: at(1).toISOString(),
      overdue: false,
    });
    expect(decideAccessReviewItem(kept.record, first, { decision: 'revoke', note: null }, ALICE, stamps(at(1)))).toEqual({
      outcome: 'refused',
      reason: 'item_decided',
    });
    expect(decideAccessReviewItem(kept.record, 'rs_notanitem', { decision: 'keep', note: null }, ALICE, stamps(at(1)))).toEqual({
      outcome: 'refused',
      reason: 'item_not_found',
    });

    expect(decideAccessReviewItem(kept.record, second, { decision: 'keep', note: null }, ALICE, stamps(at(10)))).toEqual({
      outcome: 'refused',
      reason: 'review_due',
    });

    const last = decided(kept.record, second, 'revoke');
    expect(last.record.status).toBe('completed');
    expect(last.events.map((event) => event.type)).toEqual([
      'com.resiliencescore.access-review.item-decided.v1',
      'com.resiliencescore.access-review.completed.v1',
    ]);
    expect(decideAccessReviewItem(last.record, second, { decision: 'keep', note: null }, ALICE, stamps(at(2)))).toEqual({
      outcome: 'refused',
      reason: 'review_completed',
    });
  });

  test.each(['keep', 'revoke'] as const)(
    'when the review falls due with onOverdue %s, then the undecided items are decided so by the system and the review completes',
    (onOverdue) => {
      const { review } = aReview(3, onOverdue);
      const kept = decided(review, review.items[0]!.clientId, 'keep');

      expect(settleOverdueAccessReview(kept.record, new Date(at(10).getTime() - 1), stamps(at(9)))).toBeUndefined();
      const settled = settleOverdueAccessReview(kept.record, at(10), stamps(at(10)))!;

      expect(settled.record.status).toBe('completed');
      expect(
        settled.record.items.slice(1).every((item) => item.decision === onOverdue && item.overdue && item.decidedBy?.type === 'system'),
      ).toBe(true);
      expect(settled.record.items[0]).toMatchObject({ decision: 'keep', overdue: false });
      expect(itemsToRevoke(settled.record)).toEqual(
        onOverdue === 'revoke' ? settled.record.items.slice(1).map((item) => item.clientId) : [],
      );
      expect(settleOverdueAccessReview(settled.record, at(11), stamps(at(11)))).toBeUndefined();
    },
  );

  test('when the review nears its due time, then its due-soon alert is raised once, 3 days before, and the next work is the due time', () => {
    const { review } = aReview();

    expect(nextAccessReviewWorkAt(review)).toBe(new Date(at(10).getTime() - ACCESS_REVIEW_DUE_SOON_MS).toISOString());
    expect(accessReviewDueSoon(review, at(6), { id: randomUUID(), time: at(6) })).toBeUndefined();
    const noticed = accessReviewDueSoon(review, at(7), { id: randomUUID(), time: at(7) })!;
    expect(noticed.events[0]?.data).toMatchObject({ dueAt: review.dueAt, pending: 3 });
    expect(accessReviewDueSoon(noticed.record, at(8), { id: randomUUID(), time: at(8) })).toBeUndefined();
    expect(nextAccessReviewWorkAt(noticed.record)).toBe(review.dueAt);
    expect(nextAccessReviewWorkAt(settleOverdueAccessReview(noticed.record, at(10), stamps(at(10)))!.record)).toBeNull();
  });

  test('when a review’s events are folded again, even delivered twice, then they make the same record', () => {
    const { review, events } = aReview();
    const first = decided(review, review.items[0]!.clientId, 'keep');
    const settled = settleOverdueAccessReview(first.record, at(10), stamps(at(10)))!;
    const all = [...events, ...first.events, ...settled.events];

    expect(foldAccessReview(undefined, all)).toEqual(settled.record);
    expect(foldAccessReview(undefined, [...all, ...all])).toEqual(settled.record);
  });

  test('when the report is made, then each item carries its use and the period runs from the start to the completion', () => {
    const { review } = aReview(1);
    const done = decided(review, review.items[0]!.clientId, 'keep', at(2));

    const report = accessReviewReportOf(done.record, () => ({ lastUsedAt: at(1).toISOString(), readsInPeriod: 7 }), at(5));

    expect(report.period).toEqual({ from: START.toISOString(), to: at(2).toISOString() });
    expect(report.items[0]).toMatchObject({ decision: 'keep', lastUsedAt: at(1).toISOString(), readsInPeriod: 7 });
    expect(report.issuedAt).toBe(at(5).toISOString());
  });
});
