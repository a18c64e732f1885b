import { randomBytes, randomUUID } from 'node:crypto';
import {
  accessReviewDueSoon,
  decideAccessReviewItem,
  foldAccessReview,
  generateAccessReviewId,
  settleOverdueAccessReview,
  startAccessReview,
  type Origin,
  type StoredAccessReview,
} from '@rsd/domain';
import { domainEventSchema, type AccessReviewEvent } from '@rsd/contracts';
import type { AuthorizationStore, OutboxEntry } from '@rsd/ports';
import { uniqueName } from './eventually';
import { describeStoreContract } from './per-test';
import { aStoredAuthorization, aUniqueClientId } from './port-fixtures';

export interface AccessReviewStoreFixture {
  store: AuthorizationStore;
  cleanup(): Promise<void>;
}

const START = new Date('2026-11-21T08:00:00.000Z');
const DAY = 86_400_000;
const REVIEWER: Origin = {
  actor: { type: 'person', id: 'https://issuer.example|alice', via: 'api' },
  requestId: 'req-1',
  address: '203.0.113.7',
};
const stamps = (time: Date) => () => ({ id: randomUUID(), time });

/** The review's events as the outbox holds them. */
const outboxOf = (events: readonly AccessReviewEvent[]): OutboxEntry[] =>
  events.map((event) => ({ id: event.id, topic: 'rsd.authorizations.v1', key: event.data.reviewId, value: JSON.stringify(event) }));

/**
 * Decision 54: what every store of access reviews must do. Reviews live beside the grants in the
 * authorization store and share its outbox; each test uses its own organization.
 */
export function describeAccessReviewStoreContract(name: string, open: () => Promise<AccessReviewStoreFixture>): void {
  describeStoreContract(`AccessReviewStore contract: ${name}`, open, (store) => {
    let organizationId: string;

    beforeEach(() => {
      organizationId = uniqueName('org');
    });

    /** A review of three active grants, created at `at` and due `dueInDays` later. */
    async function aReview(at = START, dueInDays = 10): Promise<{ review: StoredAccessReview; events: AccessReviewEvent[] }> {
      const grants = [1, 2, 3].map(() => aStoredAuthorization({ organizationId, createdAt: '2026-01-01T00:00:00.000Z' }));
      const started = startAccessReview(
        { reviewId: generateAccessReviewId(), organizationId, dueAt: new Date(at.getTime() + dueInDays * DAY), onOverdue: 'revoke' },
        grants,
        REVIEWER,
        { id: randomUUID(), time: at },
      );
      await store.createReview(started.record, outboxOf(started.events));
      return { review: started.record, events: started.events };
    }

    it('when a review is created, then it is found as stored, with its events owed under its id', async () => {
      const { review, events } = await aReview();

      expect(await store.findReview(organizationId, review.reviewId)).toEqual(review);
      const owed = (await store.pendingOutbox(10_000)).find((group) => group.clientId === review.reviewId);
      expect(owed?.entries.map((entry) => entry.id)).toEqual(events.map((event) => event.id));
    });

    it('when another organization asks for a review, or an unknown id is asked for, then it is not found', async () => {
      const { review } = await aReview();

      expect(await store.findReview(uniqueName('org'), review.reviewId)).toBeUndefined();
      expect(await store.findReview(organizationId, generateAccessReviewId())).toBeUndefined();
      expect(await store.list(organizationId)).toEqual([]);
    });

    it("when the organization is purged (decision 56), then its grants and reviews are gone, their keys find nothing, and another organization's stay", async () => {
      const { review } = await aReview();
      const grant = aStoredAuthorization({
        organizationId,
        keyDigest: randomBytes(32).toString('hex'),
        claimTokenDigest: randomBytes(32).toString('hex'),
      });
      await store.create(grant, []);
      const other = aStoredAuthorization({ organizationId: uniqueName('org') });
      await store.create(other, []);

      expect(await store.knownClientIds([grant.clientId, other.clientId, aUniqueClientId()])).toEqual(
        new Set([grant.clientId, other.clientId]),
      );
      expect(await store.purgeOrganization(organizationId)).toEqual([grant.clientId]);
      expect(await store.purgeOrganization(organizationId)).toEqual([]);
      expect(await store.knownClientIds([grant.clientId, other.clientId, grant.clientId])).toEqual(new Set([other.clientId]));
      expect(await store.knownClientIds([])).toEqual(new Set());

      expect(await store.list(organizationId)).toEqual([]);
      expect(await store.find(organizationId, grant.clientId)).toBeUndefined();
      expect(await store.findByKeyDigest(grant.keyDigest as string)).toBeUndefined();
      expect(await store.findByClaimToken(grant.claimTokenDigest as string)).toBeUndefined();
      expect(await store.findReview(organizationId, review.reviewId)).toBeUndefined();
      expect(await store.find(other.organizationId, other.clientId)).toEqual(other);
    });

    it('when a review is created twice, then the second is refused', async () => {
      const { review } = await aReview();

      await expect(store.createReview(review, [])).rejects.toThrow();
    });

    it('when an update names the revision read, then it is written with its events; a stale revision writes nothing', async () => {
      const { review } = await aReview();
      const decided = decideAccessReviewItem(
        review,
        review.items[0]!.clientId,
        { decision: 'keep', note: 'still needed' },
        REVIEWER,
        stamps(START),
      );
      if (decided.outcome !== 'changed') throw new Error('the decision was refused');

      expect(await store.updateReview(decided.record, review.revision, outboxOf(decided.events))).toBe(true);
      expect(await store.updateReview(decided.record, review.revision, [])).toBe(false);

      expect(await store.findReview(organizationId, review.reviewId)).toEqual(decided.record);
    });

    it('when every event a review owes is read back from the outbox and folded, then it makes the stored review (a view rebuilt from the log)', async () => {
      const { review } = await aReview();
      const kept = decideAccessReviewItem(review, review.items[1]!.clientId, { decision: 'revoke', note: null }, REVIEWER, stamps(START));
      if (kept.outcome !== 'changed') throw new Error('the decision was refused');
      await store.updateReview(kept.record, review.revision, outboxOf(kept.events));
      const settled = settleOverdueAccessReview(
        kept.record,
        new Date(START.getTime() + 11 * DAY),
        stamps(new Date(START.getTime() + 11 * DAY)),
      );
      await store.updateReview(settled!.record, kept.record.revision, outboxOf(settled!.events));

      const owed = (await store.pendingOutbox(10_000)).find((group) => group.clientId === review.reviewId)?.entries ?? [];
      const events = owed.map((entry) => domainEventSchema.parse(JSON.parse(entry.value)) as AccessReviewEvent);

      expect(foldAccessReview(undefined, events)).toEqual(await store.findReview(organizationId, review.reviewId));
      expect((await store.findReview(organizationId, review.reviewId))?.status).toBe('completed');
    });

    it('when reviews are listed, then they come newest first, a page at a time after the last one given', async () => {
      const made: StoredAccessReview[] = [];
      for (let day = 0; day < 5; day += 1) made.push((await aReview(new Date(START.getTime() + day * DAY))).review);
      // Two of one instant are ordered by id.
      made.push((await aReview(new Date(START.getTime() + 4 * DAY))).review);
      const expected = [...made].sort((a, b) =>
        a.createdAt === b.createdAt ? (a.reviewId < b.reviewId ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
      );

      const first = await store.listReviews(organizationId, { limit: 4 });
      const last = first.at(-1)!;
      const second = await store.listReviews(organizationId, { limit: 4, after: { createdAt: last.createdAt, reviewId: last.reviewId } });

      expect([...first, ...second].map((review) => review.reviewId)).toEqual(expected.map((review) => review.reviewId));
      expect(await store.listReviews(uniqueName('org'), { limit: 10 })).toEqual([]);
    });

    it('when a review falls due (its due-soon alert, then its due time), then findReviewsDue finds it until it is completed', async () => {
      const { review } = await aReview(START, 10);
      const beforeNotice = new Date(START.getTime() + 6 * DAY);
      const atNotice = new Date(START.getTime() + 7 * DAY);
      const atDue = new Date(START.getTime() + 10 * DAY);
      const dueIds = async (now: Date) => (await store.findReviewsDue(now, 10_000)).map((found) => found.reviewId);

      expect(await dueIds(beforeNotice)).not.toContain(review.reviewId);
      expect(await dueIds(atNotice)).toContain(review.reviewId);

      const noticed = accessReviewDueSoon(review, atNotice, { id: randomUUID(), time: atNotice })!;
      await store.updateReview(noticed.record, review.revision, outboxOf(noticed.events));
      expect(await dueIds(atNotice)).not.toContain(review.reviewId);
      expect(await dueIds(atDue)).toContain(review.reviewId);

      const settled = settleOverdueAccessReview(noticed.record, atDue, stamps(atDue))!;
      await store.updateReview(settled.record, noticed.record.revision, outboxOf(settled.events));
      expect(await dueIds(new Date(atDue.getTime() + 365 * DAY))).not.toContain(review.reviewId);
    });

    it('when a review owes events, then markPublished clears them as it does for grants', async () => {
      const { review, events } = await aReview();

      await store.markPublished(
        review.reviewId,
        events.map((event) => event.id),
      );

      expect((await store.pendingOutbox(10_000)).find((group) => group.clientId === review.reviewId)).toBeUndefined();
    });
  });
}
