import { EVENT_TYPES, type CalculatedScore, type DomainEvent } from '@rsd/contracts';
import { anActiveCredentialView, anEvent } from '@rsd/testkit';
import { credentialView, isActive } from './credential-view';
import { latestScoreView } from './latest-score-view';
import { scoreHistoryView } from './score-history-view';
import type { ViewDefinition } from './view';

const at = new Date('2026-11-20T00:00:00.000Z');
const ids = { clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', organizationId: 'acme' };

const created = (revision = 1, expiresAt: string | null = null) =>
  anEvent(
    EVENT_TYPES.authorizationCreated,
    {
      ...ids,
      recipientType: 'auditor',
      recipientName: null,
      scopes: ['qr_score'],
      expiresAt,
      keyDigest: 'a'.repeat(64),
      createdAt: at.toISOString(),
      revision,
    },
    { time: at },
  );
const revoked = (revision: number) =>
  anEvent(EVENT_TYPES.authorizationRevoked, { ...ids, revokedAt: at.toISOString(), revision }, { time: at });
const expired = (revision: number) =>
  anEvent(EVENT_TYPES.authorizationExpired, { ...ids, expiredAt: at.toISOString(), revision }, { time: at });
const rotated = (revision: number, keyDigest: string, previousKeyDigest: string | null, previousKeyExpiresAt: string | null = null) =>
  anEvent(
    EVENT_TYPES.authorizationKeyRotated,
    { ...ids, keyDigest, previousKeyDigest, previousKeyExpiresAt, rotatedAt: at.toISOString(), revision },
    { time: at },
  );
const score = (scoreDate: string, value: number, calculatedAt = `${scoreDate}T06:00:00.000Z`) => {
  const data: CalculatedScore = {
    organizationId: 'acme',
    scoreDate,
    score: value,
    grade: 'Improve',
    pillarScores: { structuralIntegrity: value, failureResistance: value, deviceHealth: value, recoveryCapability: value },
    calculatedAt,
  };
  return anEvent(EVENT_TYPES.scoreCalculated, data, { time: at });
};

/** What a store would hold per key after the events, applied through `keyOf` and `evolve` only. */
function fold<S>(view: ViewDefinition<S>, events: readonly DomainEvent[], documents = new Map<string, S>()): Map<string, S> {
  for (const event of events) {
    const key = view.keyOf(event);
    if (key === undefined) continue;
    const next = view.evolve(documents.get(key), event);
    if (next !== undefined) documents.set(key, next);
  }
  return documents;
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) => permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}

const scoreEvents = [
  score('2026-11-19', 60),
  score('2026-11-20', 70),
  score('2026-11-20', 74, '2026-11-20T09:00:00.000Z'),
  score('2026-11-18', 40, '2026-11-21T00:00:00.000Z'),
];

describe('credential view', () => {
  test('when an authorization is created, then its view is active with the fields the read API needs', () => {
    const event = created(1, '2027-01-01T00:00:00.000Z');

    expect(fold(credentialView, [event]).get(ids.clientId)).toEqual(
      anActiveCredentialView({
        ...ids,
        keyDigest: 'a'.repeat(64),
        expiresAt: '2027-01-01T00:00:00.000Z',
        // What a certificate names of the grant (decision 55).
        recipientType: event.data.recipientType,
        recipientName: event.data.recipientName,
        createdEventId: event.id,
      }),
    );
  });

  test('when it is revoked or expires, then the status and revision follow the event', () => {
    expect(fold(credentialView, [created(), revoked(2)]).get(ids.clientId)).toMatchObject({ status: 'revoked', revision: 2 });
    expect(fold(credentialView, [created(), expired(2)]).get(ids.clientId)).toMatchObject({ status: 'expired', revision: 2 });
  });

  test('when run twice, then it is idempotent: the second pass changes nothing and returns the same states', () => {
    const events = [created(), revoked(2)];
    const once = fold(credentialView, events);
    const state = once.get(ids.clientId);

    for (const event of events) expect(credentialView.evolve(state, event)).toBe(state);
    expect(fold(credentialView, events, new Map(once))).toEqual(once);
  });

  test('when an older event arrives after a newer one, then it changes nothing (order-safe)', () => {
    const afterRevoke = fold(credentialView, [created(), revoked(2)]).get(ids.clientId);

    expect(credentialView.evolve(afterRevoke, created(1))).toBe(afterRevoke);
    expect(credentialView.evolve(afterRevoke, expired(2))).toBe(afterRevoke);
  });

  test('when the key is rotated, then the view holds the new digest and the previous one with its end; run twice or out of order, nothing more changes', () => {
    const rotation = rotated(2, 'b'.repeat(64), 'a'.repeat(64), '2026-11-21T00:00:00.000Z');
    const view = fold(credentialView, [created(), rotation]).get(ids.clientId);

    expect(view).toMatchObject({
      keyDigest: 'b'.repeat(64),
      previousKeyDigest: 'a'.repeat(64),
      previousKeyExpiresAt: '2026-11-21T00:00:00.000Z',
      revision: 2,
    });
    expect(credentialView.evolve(view, rotation)).toBe(view);
    expect(credentialView.evolve(view, created(1))).toBe(view);
    const revokedLater = fold(credentialView, [created(), revoked(3)]).get(ids.clientId);
    expect(credentialView.evolve(revokedLater, rotation)).toBe(revokedLater);
    expect(credentialView.evolve(undefined, rotation)).toBeUndefined();
  });

  test('when an allow list was granted, then the view carries it; an event from before allow lists existed means none', () => {
    const withList = { ...created(), data: { ...created().data, allowedCidrs: ['10.0.0.0/8'] } };

    expect(fold(credentialView, [withList]).get(ids.clientId)?.allowedCidrs).toEqual(['10.0.0.0/8']);
    expect(fold(credentialView, [created()]).get(ids.clientId)?.allowedCidrs).toBeNull();
  });

  test('when a status event names a credential never seen, then there is nothing to serve', () => {
    expect(credentialView.evolve(undefined, revoked(2))).toBeUndefined();
  });

  test('when a score event arrives, then the credential view is not concerned', () => {
    expect(credentialView.keyOf(score('2026-11-20', 1))).toBeUndefined();
  });

  test('when a view is read at or after its expiresAt, then it is no longer active, whatever its status says', () => {
    const view = fold(credentialView, [created(1, '2026-12-01T00:00:00.000Z')]).get(ids.clientId);
    if (!view) throw new Error('no view');

    expect(isActive(view, new Date('2026-11-30T23:59:59.999Z'))).toBe(true);
    expect(isActive(view, new Date('2026-12-01T00:00:00.000Z'))).toBe(false);
    expect(isActive({ ...view, status: 'revoked' }, new Date('2026-11-01T00:00:00.000Z'))).toBe(false);
  });
});

describe('latest score view', () => {
  test('when scores arrive, then the latest is the greatest date, and for one date the latest calculation', () => {
    expect(fold(latestScoreView, scoreEvents).get('acme')).toMatchObject({ scoreDate: '2026-11-20', score: 74 });
  });

  test('when the events arrive in any order, then the latest is the same (order-safe)', () => {
    const expected = fold(latestScoreView, scoreEvents);

    for (const order of permutations(scoreEvents)) expect(fold(latestScoreView, order)).toEqual(expected);
  });

  test('when run twice, then it is idempotent', () => {
    const once = fold(latestScoreView, scoreEvents);
    const state = once.get('acme');

    for (const event of scoreEvents) expect(latestScoreView.evolve(state, event)).toBe(state);
  });

  test('when the latest changes, then its version grows; versions order as decision 2 does', () => {
    const versions = [score('2026-11-19', 1), score('2026-11-20', 1), score('2026-11-20', 1, '2026-11-20T09:00:00.000Z')].map((event) =>
      latestScoreView.versionOf(event.data),
    );

    expect([...versions].sort()).toEqual(versions);
  });
});

describe.each([latestScoreView, scoreHistoryView])('$name: the newest event wins', (view) => {
  test('when an event meets any state of its document, then evolve keeps the state or takes the event, whichever has the greater version', () => {
    const events = [...scoreEvents, score('2026-11-20', 74), score('2026-11-20', 75, '2026-11-20T09:00:00.001Z')];
    expect(view.newestWins).toBe(true);
    for (const earlier of permutations(events.slice(0, 3))) {
      for (const [key, state] of fold(view, earlier)) {
        for (const event of events.filter((e) => view.keyOf(e) === key)) {
          const fresh = view.evolve(undefined, event)!;
          const expected = view.versionOf(fresh) > view.versionOf(state) ? fresh : state;
          expect(view.evolve(state, event)).toEqual(expected);
        }
      }
    }
  });
});

test('when a credential is rotated, then its view keeps what came before: not a view whose newest event wins', () => {
  expect(credentialView.newestWins).toBeUndefined();
  expect(credentialView.evolve(undefined, rotated(2, 'b'.repeat(64), 'a'.repeat(64)))).toBeUndefined();
});

describe('score history view', () => {
  test('when scores arrive, then there is one document per date holding its latest calculation', () => {
    const history = fold(scoreHistoryView, scoreEvents);

    expect([...history.keys()].sort()).toEqual(['acme|2026-11-18', 'acme|2026-11-19', 'acme|2026-11-20']);
    expect(history.get('acme|2026-11-20')).toMatchObject({ score: 74 });
    expect(scoreHistoryView.partitionOf(history.get('acme|2026-11-20') as CalculatedScore)).toBe('acme');
  });

  test('when the events arrive in any order, then the history is the same (order-safe)', () => {
    const expected = fold(scoreHistoryView, scoreEvents);

    for (const order of permutations(scoreEvents)) expect(fold(scoreHistoryView, order)).toEqual(expected);
  });

  test('when run twice, then it is idempotent', () => {
    const once = fold(scoreHistoryView, scoreEvents);

    expect(fold(scoreHistoryView, scoreEvents, new Map(once))).toEqual(once);
    for (const [key, state] of once) {
      for (const event of scoreEvents.filter((e) => scoreHistoryView.keyOf(e) === key))
        expect(scoreHistoryView.evolve(state, event)).toBe(state);
    }
  });

  test('when an authorization event arrives, then the score views are not concerned', () => {
    expect(scoreHistoryView.keyOf(created())).toBeUndefined();
    expect(latestScoreView.keyOf(revoked(2))).toBeUndefined();
  });
});
