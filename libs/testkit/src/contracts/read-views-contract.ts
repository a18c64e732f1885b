import type { ReadViews } from '@rsd/ports';
import { uniqueName } from './eventually';
import { aCalculatedScore as aScore, aCredentialView } from './port-fixtures';

export interface ReadViewsFixture {
  views: ReadViews;
  cleanup(): Promise<void>;
}

/** What every read-view store must do: every update is revision- or date-guarded, so replays change nothing. */
export function describeReadViewsContract(name: string, open: () => Promise<ReadViewsFixture>): void {
  describe(`ReadViews contract: ${name}`, () => {
    let fixture: ReadViewsFixture;
    let views: ReadViews;
    let organizationId: string;

    beforeEach(async () => {
      fixture = await open();
      views = fixture.views;
      organizationId = uniqueName('org');
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    describe('credentials', () => {
      it('when a view is put, then get returns it', async () => {
        const view = aCredentialView({ scopes: ['qr_score', 'score_trend'], expiresAt: '2027-01-01T00:00:00.000Z' });

        await views.credentials.put(view);

        expect(await views.credentials.get(view.clientId)).toEqual(view);
      });

      it('when the Client ID is unknown, then get returns undefined', async () => {
        expect(await views.credentials.get(aCredentialView().clientId)).toBeUndefined();
      });

      it('when a returned view is changed by the caller, then the stored view is not', async () => {
        const view = aCredentialView();
        await views.credentials.put(view);

        const returned = await views.credentials.get(view.clientId);
        try {
          returned?.scopes.push('pillar_breakdown');
        } catch {
          // An implementation may hand out frozen values instead of copies: the change is refused.
        }

        expect(await views.credentials.get(view.clientId)).toEqual(view);
      });

      it('when a view with the same or an older revision is put, then the stored view stays', async () => {
        const current = aCredentialView({ revision: 2 });
        await views.credentials.put(current);

        await views.credentials.put({ ...current, scopes: ['score_trend'] });
        await views.credentials.put({ ...current, status: 'revoked', revision: 1 });

        expect(await views.credentials.get(current.clientId)).toEqual(current);
      });

      it('when a view with a newer revision is put, then it replaces the stored one', async () => {
        const first = aCredentialView();
        await views.credentials.put(first);
        const newer = { ...first, scopes: ['score_trend' as const], revision: 2 };

        await views.credentials.put(newer);

        expect(await views.credentials.get(first.clientId)).toEqual(newer);
      });

      it('when setStatus carries a newer revision, then status and revision change', async () => {
        const view = aCredentialView();
        await views.credentials.put(view);

        await views.credentials.setStatus(view.clientId, 'revoked', 2);

        expect(await views.credentials.get(view.clientId)).toEqual({ ...view, status: 'revoked', revision: 2 });
      });

      it('when setStatus carries the same or an older revision, then nothing changes', async () => {
        const view = aCredentialView({ status: 'revoked', revision: 3 });
        await views.credentials.put(view);

        await views.credentials.setStatus(view.clientId, 'expired', 3);
        await views.credentials.setStatus(view.clientId, 'active', 2);

        expect(await views.credentials.get(view.clientId)).toEqual(view);
      });

      it('when setStatus names an unknown Client ID, then it is ignored', async () => {
        const unknown = aCredentialView();

        await views.credentials.setStatus(unknown.clientId, 'revoked', 2);

        expect(await views.credentials.get(unknown.clientId)).toBeUndefined();
      });

      it('when the same events are applied twice, then the replay changes nothing at any step', async () => {
        const view = aCredentialView();
        const events = [() => views.credentials.put(view), () => views.credentials.setStatus(view.clientId, 'revoked', 2)];
        for (const apply of events) await apply();
        const once = await views.credentials.get(view.clientId);

        const duringReplay = [];
        for (const apply of events) {
          await apply();
          duringReplay.push(await views.credentials.get(view.clientId));
        }

        expect(once).toEqual({ ...view, status: 'revoked', revision: 2 });
        expect(duringReplay).toEqual([once, once]);
      });
    });

    describe('scores', () => {
      it('when scores for several dates are recorded, then latest is the one with the greatest scoreDate', async () => {
        await views.scores.record(aScore(organizationId, '2026-11-19', { score: 60 }));
        await views.scores.record(aScore(organizationId, '2026-11-21', { score: 80 }));
        await views.scores.record(aScore(organizationId, '2026-11-20', { score: 70, calculatedAt: '2026-11-22T00:00:00.000Z' }));

        expect(await views.scores.latest(organizationId)).toEqual(aScore(organizationId, '2026-11-21', { score: 80 }));
      });

      it('when a recalculation for the same date is later, then it replaces the score', async () => {
        const first = aScore(organizationId, '2026-11-20', { score: 70, calculatedAt: '2026-11-20T06:00:00.000Z' });
        const recalculated = { ...first, score: 74, grade: 'Strengthen' as const, calculatedAt: '2026-11-20T09:00:00.000Z' };
        await views.scores.record(first);

        await views.scores.record(recalculated);

        expect(await views.scores.latest(organizationId)).toEqual(recalculated);
        expect(await views.scores.history(organizationId, 10)).toEqual([recalculated]);
      });

      it('when a calculation for the same date is earlier, then it does not replace the score', async () => {
        const later = aScore(organizationId, '2026-11-20', { score: 74, calculatedAt: '2026-11-20T09:00:00.000Z' });
        await views.scores.record(later);

        await views.scores.record({ ...later, score: 50, grade: 'Improve', calculatedAt: '2026-11-20T06:00:00.000Z' });

        expect(await views.scores.latest(organizationId)).toEqual(later);
        expect(await views.scores.history(organizationId, 10)).toEqual([later]);
      });

      it('when a score for an older date arrives late, then latest stays and history gains it', async () => {
        const newer = aScore(organizationId, '2026-11-21');
        const lateOlder = aScore(organizationId, '2026-11-18', { score: 40, grade: 'Improve', calculatedAt: '2026-11-22T00:00:00.000Z' });
        await views.scores.record(newer);

        await views.scores.record(lateOlder);

        expect(await views.scores.latest(organizationId)).toEqual(newer);
        expect(await views.scores.history(organizationId, 10)).toEqual([newer, lateOlder]);
      });

      it('when history is read, then it lists one score per date, newest date first, up to the limit', async () => {
        const dates = ['2026-11-18', '2026-11-21', '2026-11-19', '2026-11-20'];
        for (const date of dates) await views.scores.record(aScore(organizationId, date));
        await views.scores.record(
          aScore(organizationId, '2026-11-20', { score: 90, grade: 'Sustain', calculatedAt: '2026-11-20T12:00:00.000Z' }),
        );

        const all = await views.scores.history(organizationId, 10);
        const limited = await views.scores.history(organizationId, 2);

        expect(all.map((score) => score.scoreDate)).toEqual(['2026-11-21', '2026-11-20', '2026-11-19', '2026-11-18']);
        expect(all[1]?.score).toBe(90);
        expect(limited.map((score) => score.scoreDate)).toEqual(['2026-11-21', '2026-11-20']);
      });

      it('when the same score is recorded twice, then it appears once', async () => {
        const score = aScore(organizationId, '2026-11-20');

        await views.scores.record(score);
        await views.scores.record(score);

        expect(await views.scores.history(organizationId, 10)).toEqual([score]);
        expect(await views.scores.latest(organizationId)).toEqual(score);
      });

      it('when two organizations have scores, then each sees only its own', async () => {
        const otherOrganization = uniqueName('other-org');
        const ours = aScore(organizationId, '2026-11-19');
        const theirs = aScore(otherOrganization, '2026-11-21', { score: 99, grade: 'Sustain' });

        await views.scores.record(ours);
        await views.scores.record(theirs);

        expect(await views.scores.latest(organizationId)).toEqual(ours);
        expect(await views.scores.history(organizationId, 10)).toEqual([ours]);
        expect(await views.scores.latest(otherOrganization)).toEqual(theirs);
      });

      it('when an organization has no scores, then latest is undefined and history is empty', async () => {
        expect(await views.scores.latest(organizationId)).toBeUndefined();
        expect(await views.scores.history(organizationId, 10)).toEqual([]);
      });
    });
  });
}
