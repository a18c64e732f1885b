import { EVENT_TYPES } from '@rsd/contracts';
import { READ_VIEWS, credentialView, currentScoreView, latestScoreView, scoreHistoryView, type ViewDefinition } from '@rsd/domain';
import { projectEvent } from './project-event';
import type { ViewStore } from '@rsd/ports';
import { anEvent } from '@rsd/testkit';

/** The smallest store that keeps the port's promise (a write only where the version is greater), counting its calls. */
function countingStore() {
  const documents = new Map<string, unknown>();
  const calls = { get: 0, put: 0, refused: 0 };
  const id = (view: ViewDefinition<unknown>, key: string) => `${view.name}/${key}`;
  const store: ViewStore = {
    getMany: () => Promise.reject(new Error('a projection reads one document at a time')),
    get: <S>(view: ViewDefinition<S>, key: string) => {
      calls.get += 1;
      return Promise.resolve(documents.get(id(view as ViewDefinition<unknown>, key)) as S | undefined);
    },
    put: <S>(view: ViewDefinition<S>, key: string, state: S) => {
      calls.put += 1;
      const stored = documents.get(id(view, key)) as S | undefined;
      if (stored !== undefined && view.versionOf(stored) >= view.versionOf(state)) {
        calls.refused += 1;
        return Promise.resolve(false);
      }
      documents.set(id(view, key), state);
      return Promise.resolve(true);
    },
    list: () => Promise.resolve([]),
    purgeOrganization: () => Promise.reject(new Error('a projection purges nothing')),
    close: () => Promise.resolve(),
  };
  return { store, calls, documents };
}

const scored = (scoreDate: string, score: number, calculatedAt = `${scoreDate}T06:00:00.000Z`) =>
  anEvent(
    EVENT_TYPES.scoreCalculated,
    {
      organizationId: 'acme',
      scoreDate,
      score,
      grade: 'Improve',
      pillarScores: { structuralIntegrity: score, failureResistance: score, deviceHealth: score, recoveryCapability: score },
      calculatedAt,
    },
    { time: new Date(calculatedAt) },
  );

describe('projectEvent', () => {
  test('when views whose newest event wins take scores, then nothing is read first and the guard keeps the newest', async () => {
    const { store, calls, documents } = countingStore();

    const views = [latestScoreView, scoreHistoryView];
    await projectEvent(store, views, scored('2026-11-20', 70));
    await projectEvent(store, views, scored('2026-11-19', 60));
    await projectEvent(store, views, scored('2026-11-20', 50, '2026-11-20T05:00:00.000Z'));

    expect(calls.get).toBe(0);
    // Each score is written to both views; the late one for 11-20 is refused by both, the 11-19 one by the latest only.
    expect(calls).toEqual({ get: 0, put: 6, refused: 3 });
    expect(documents.get(`${latestScoreView.name}/acme`)).toMatchObject({ scoreDate: '2026-11-20', score: 70 });
    expect(documents.get(`${scoreHistoryView.name}/acme|2026-11-19`)).toMatchObject({ score: 60 });
  });

  test("when the read API's views take a score, then the current score (the history's head) is not written: history is", async () => {
    const { store, calls, documents } = countingStore();

    await projectEvent(store, READ_VIEWS, scored('2026-11-20', 70));

    expect(calls).toEqual({ get: 0, put: 1, refused: 0 });
    expect([...documents.keys()]).toEqual([`${scoreHistoryView.name}/acme|2026-11-20`]);
    expect(documents.has(`${currentScoreView.name}/acme`)).toBe(false);
  });

  test('when a view needs what it holds (a credential), then the document is read before it is written', async () => {
    const { store, calls } = countingStore();
    const revoked = anEvent(
      EVENT_TYPES.authorizationRevoked,
      { clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', organizationId: 'acme', revokedAt: new Date().toISOString(), revision: 2 },
      { time: new Date() },
    );

    await projectEvent(store, [credentialView], revoked);

    // Nothing to revoke yet: read, and nothing written.
    expect(calls).toEqual({ get: 1, put: 0, refused: 0 });
  });

  test('when an event is of a type a view does not handle, then the view is not called and none of its documents is read', async () => {
    const { store, calls } = countingStore();
    const keyOf = jest.fn(credentialView.keyOf);
    const evolve = jest.fn(credentialView.evolve);
    const credentials = { ...credentialView, keyOf, evolve };

    await projectEvent(store, [credentials, scoreHistoryView], scored('2026-11-20', 70));

    expect(keyOf).not.toHaveBeenCalled();
    expect(evolve).not.toHaveBeenCalled();
    // The score's own view wrote it, without reading.
    expect(calls).toEqual({ get: 0, put: 1, refused: 0 });
  });
});
