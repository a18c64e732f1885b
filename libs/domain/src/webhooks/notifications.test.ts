import {
  EVENT_TYPES,
  webhookPayloadSchema,
  type CalculatedScore,
  type Grade,
  type PillarScores,
  type Scope,
  type WebhookEventType,
} from '@rsd/contracts';
import { anEvent } from '@rsd/testkit';
import type { CredentialView } from '../views/credential-view';
import {
  alertDeliveriesFor,
  alertTriggerOf,
  deliverableWithoutGrant,
  deliveriesFor,
  scopesAllow,
  stillDeliverable,
  triggerOf,
  type NotifierTrigger,
  type SubscriptionFacts,
} from './notifications';

const clientId = 'rs_AAAAAAAAAAAAAAAAAAAAAAAA';
const organizationId = 'acme';
const eventTime = new Date('2026-11-21T08:00:00.000Z');
const now = new Date('2026-11-21T08:00:02.000Z');
const ALL_EVENTS: WebhookEventType[] = ['score.updated', 'grade.changed', 'authorization.ended'];
let sequence = 0;
const nextId = () => `event-${(sequence += 1)}`;
const stamp = () => ({ id: nextId(), time: eventTime });

const pillars = (value: number): PillarScores => ({
  structuralIntegrity: value,
  failureResistance: value,
  deviceHealth: value,
  recoveryCapability: value,
});
const calculated = (scoreDate: string, score: number, grade: Grade, fields: Partial<CalculatedScore> = {}): CalculatedScore => ({
  organizationId,
  scoreDate,
  score,
  grade,
  pillarScores: pillars(score),
  calculatedAt: `${scoreDate}T06:00:00.000Z`,
  ...fields,
});
const scoreEvent = (data: CalculatedScore) => anEvent(EVENT_TYPES.scoreCalculated, data, stamp());
const revoked = (revision: number) =>
  anEvent(EVENT_TYPES.authorizationRevoked, { clientId, organizationId, revokedAt: '2026-11-21T07:59:59.500Z', revision }, stamp());
const expired = (revision: number) =>
  anEvent(EVENT_TYPES.authorizationExpired, { clientId, organizationId, expiredAt: '2026-11-21T07:59:58.000Z', revision }, stamp());

const credential = (scopes: Scope[], fields: Partial<CredentialView> = {}): CredentialView => ({
  clientId,
  organizationId,
  keyDigest: 'a'.repeat(64),
  scopes,
  status: 'active',
  expiresAt: null,
  revision: 1,
  ...fields,
});
const subscription = (
  scopes: Scope[],
  events: WebhookEventType[] = ALL_EVENTS,
  fields: Partial<SubscriptionFacts> = {},
): SubscriptionFacts => ({
  id: 'wh_BBBBBBBBBBBBBBBBBBBBBBBB',
  events,
  status: 'active',
  authorization: credential(scopes),
  ...fields,
});

/** The trigger of a score event on top of `previous`, which must make one. */
function scoreChange(previous: CalculatedScore | undefined, latest: CalculatedScore): NotifierTrigger {
  const trigger = triggerOf(scoreEvent(latest), { latestScore: previous });
  if (!trigger) throw new Error('expected the latest score to change');
  return trigger;
}

describe('triggerOf', () => {
  const current = calculated('2026-11-20', 70, 'Optimize');

  test('when the organization has its first score, then the latest score changed from nothing', () => {
    const event = scoreEvent(current);

    expect(triggerOf(event, {})).toEqual({
      kind: 'latest-score-changed',
      eventId: event.id,
      occurredAt: eventTime.toISOString(),
      organizationId,
      previous: undefined,
      // The view keeps the id of the event the score came in (a certificate names it).
      latest: { ...current, eventId: event.id },
    });
  });

  test('when a score for a later date or a later recalculation of the same date arrives, then the latest score changed', () => {
    const nextDay = calculated('2026-11-21', 72, 'Optimize');
    const recalculated = calculated('2026-11-20', 65, 'Strengthen', { calculatedAt: '2026-11-20T09:00:00.000Z' });

    expect(triggerOf(scoreEvent(nextDay), { latestScore: current })).toMatchObject({ previous: current, latest: nextDay });
    expect(triggerOf(scoreEvent(recalculated), { latestScore: current })).toMatchObject({ previous: current, latest: recalculated });
  });

  test('when a duplicate, an earlier calculation of the same date or a late score for an older date arrives, then nothing changed', () => {
    const earlier = calculated('2026-11-20', 10, 'Prioritize', { calculatedAt: '2026-11-20T05:00:00.000Z' });
    const older = calculated('2026-11-19', 10, 'Prioritize', { calculatedAt: '2026-11-21T07:00:00.000Z' });

    for (const score of [current, earlier, older]) {
      expect(triggerOf(scoreEvent(score), { latestScore: current })).toBeUndefined();
    }
  });

  test('when an active authorization is revoked or expires, then it ended, with the reason and the instant it ended', () => {
    const revoke = revoked(2);
    const expire = expired(2);

    expect(triggerOf(revoke, { credential: credential(['qr_score']) })).toEqual({
      kind: 'authorization-ended',
      eventId: revoke.id,
      occurredAt: eventTime.toISOString(),
      clientId,
      reason: 'revoked',
      endedAt: '2026-11-21T07:59:59.500Z',
    });
    expect(triggerOf(expire, { credential: credential(['qr_score']) })).toMatchObject({
      kind: 'authorization-ended',
      reason: 'expired',
      endedAt: '2026-11-21T07:59:58.000Z',
    });
  });

  test('when the Expired event comes after expiresAt already passed, then it still ends the authorization once', () => {
    const pastExpiry = credential(['qr_score'], { expiresAt: '2026-11-21T07:59:58.000Z' });

    expect(triggerOf(expired(2), { credential: pastExpiry })).toMatchObject({ kind: 'authorization-ended', reason: 'expired' });
  });

  test('when the authorization had already ended, the event is stale, or it is unknown, then nothing ends (once only)', () => {
    expect(triggerOf(revoked(3), { credential: credential(['qr_score'], { status: 'revoked', revision: 2 }) })).toBeUndefined();
    expect(triggerOf(revoked(3), { credential: credential(['qr_score'], { status: 'expired', revision: 2 }) })).toBeUndefined();
    expect(triggerOf(expired(3), { credential: credential(['qr_score'], { status: 'revoked', revision: 2 }) })).toBeUndefined();
    expect(triggerOf(revoked(2), { credential: credential(['qr_score'], { revision: 2 }) })).toBeUndefined();
    expect(triggerOf(revoked(2), {})).toBeUndefined();
  });

  test('when an authorization is created or its key rotated, then there is nothing to notify', () => {
    const created = anEvent(
      EVENT_TYPES.authorizationCreated,
      {
        clientId,
        organizationId,
        recipientType: 'auditor',
        recipientName: null,
        scopes: ['qr_score'],
        expiresAt: null,
        keyDigest: 'a'.repeat(64),
        createdAt: eventTime.toISOString(),
        revision: 1,
      },
      stamp(),
    );
    const rotated = anEvent(
      EVENT_TYPES.authorizationKeyRotated,
      {
        clientId,
        organizationId,
        keyDigest: 'b'.repeat(64),
        previousKeyDigest: null,
        previousKeyExpiresAt: null,
        rotatedAt: eventTime.toISOString(),
        revision: 2,
      },
      stamp(),
    );

    expect(triggerOf(created, {})).toBeUndefined();
    expect(triggerOf(rotated, { credential: credential(['qr_score']) })).toBeUndefined();
  });
});

describe('deliveriesFor a change of the latest score', () => {
  const previous = calculated('2026-11-20', 70, 'Optimize');
  const latest = calculated('2026-11-21', 58, 'Strengthen', {
    pillarScores: { structuralIntegrity: 50, failureResistance: 60, deviceHealth: 55, recoveryCapability: 67 },
  });
  const scoreData = { clientId, scoreDate: '2026-11-21', score: 58, grade: 'Strengthen' };
  const withPillars = { ...scoreData, pillarScores: latest.pillarScores };
  const gradeData = { clientId, scoreDate: '2026-11-21', from: 'Optimize', to: 'Strengthen' };

  test.each<[string, Scope[], { type: string; data: object }[]]>([
    [
      'qr_score',
      ['qr_score'],
      [
        { type: 'score.updated', data: scoreData },
        { type: 'grade.changed', data: gradeData },
      ],
    ],
    [
      'qr_score and pillar_breakdown',
      ['qr_score', 'pillar_breakdown'],
      [
        { type: 'score.updated', data: withPillars },
        { type: 'grade.changed', data: gradeData },
      ],
    ],
    [
      'qr_score and score_trend',
      ['qr_score', 'score_trend'],
      [
        { type: 'score.updated', data: scoreData },
        { type: 'grade.changed', data: gradeData },
      ],
    ],
    [
      'every scope',
      ['qr_score', 'score_trend', 'pillar_breakdown'],
      [
        { type: 'score.updated', data: withPillars },
        { type: 'grade.changed', data: gradeData },
      ],
    ],
    ['score_trend', ['score_trend'], [{ type: 'grade.changed', data: gradeData }]],
    ['score_trend and pillar_breakdown', ['score_trend', 'pillar_breakdown'], [{ type: 'grade.changed', data: gradeData }]],
    ['pillar_breakdown only', ['pillar_breakdown'], []],
  ])('when the authorization holds %s, then the deliveries carry exactly what those scopes allow', (_case, scopes, expected) => {
    const deliveries = deliveriesFor(scoreChange(previous, latest), subscription(scopes), now);

    expect(deliveries.map((delivery) => ({ type: delivery.payload.type, data: delivery.payload.data }))).toEqual(expected);
    for (const { payload } of deliveries) {
      expect(payload.timestamp).toBe(eventTime.toISOString());
      expect(webhookPayloadSchema.parse(payload)).toEqual(payload);
    }
  });

  test.each<[WebhookEventType[], string[]]>([
    [['score.updated'], ['score.updated']],
    [['grade.changed'], ['grade.changed']],
    [['authorization.ended'], []],
    [
      ['grade.changed', 'score.updated'],
      ['score.updated', 'grade.changed'],
    ],
  ])('when the subscription is for %j, then only those are delivered', (events, expected) => {
    const deliveries = deliveriesFor(scoreChange(previous, latest), subscription(['qr_score'], events), now);

    expect(deliveries.map((delivery) => delivery.payload.type)).toEqual(expected);
  });

  test('when it is the organization’s first score, then score.updated goes out but no grade.changed (no grade to change from)', () => {
    const deliveries = deliveriesFor(scoreChange(undefined, latest), subscription(['qr_score']), now);

    expect(deliveries.map((delivery) => delivery.payload)).toEqual([
      { type: 'score.updated', timestamp: eventTime.toISOString(), data: scoreData },
    ]);
  });

  test('when the grade stays the same, then there is no grade.changed', () => {
    const sameGrade = calculated('2026-11-21', 68, 'Optimize');

    expect(deliveriesFor(scoreChange(previous, sameGrade), subscription(['qr_score']), now).map((d) => d.payload.type)).toEqual([
      'score.updated',
    ]);
  });

  test('when a new date brings the same values, then score.updated still goes out (the scoreDate changed)', () => {
    const sameValues = calculated('2026-11-21', 70, 'Optimize');

    expect(deliveriesFor(scoreChange(previous, sameValues), subscription(['qr_score']), now)).toHaveLength(1);
  });

  test('when a recalculation changes only the pillars, then only a recipient with pillar_breakdown is told', () => {
    const pillarsOnly = { ...previous, pillarScores: pillars(90), calculatedAt: '2026-11-20T09:00:00.000Z' };
    const trigger = scoreChange(previous, pillarsOnly);

    expect(deliveriesFor(trigger, subscription(['qr_score']), now)).toEqual([]);
    expect(deliveriesFor(trigger, subscription(['qr_score', 'pillar_breakdown']), now).map((d) => d.payload.data)).toEqual([
      { clientId, scoreDate: '2026-11-20', score: 70, grade: 'Optimize', pillarScores: pillars(90) },
    ]);
  });

  test('when a recalculation changes nothing at all, then nobody is told', () => {
    const identical = { ...previous, calculatedAt: '2026-11-20T09:00:00.000Z' };

    expect(deliveriesFor(scoreChange(previous, identical), subscription(['qr_score', 'pillar_breakdown', 'score_trend']), now)).toEqual([]);
  });

  test('when the authorization is revoked, expired, or past its expiresAt, then it gets nothing', () => {
    const trigger = scoreChange(previous, latest);
    for (const authorization of [
      credential(['qr_score'], { status: 'revoked' }),
      credential(['qr_score'], { status: 'expired' }),
      credential(['qr_score'], { expiresAt: now.toISOString() }),
    ]) {
      expect(deliveriesFor(trigger, subscription(['qr_score'], ALL_EVENTS, { authorization }), now)).toEqual([]);
    }
  });

  test('when the subscription is disabled, or belongs to another organization, then it gets nothing', () => {
    const trigger = scoreChange(previous, latest);
    const elsewhere = credential(['qr_score'], { organizationId: 'globex' });

    expect(deliveriesFor(trigger, subscription(['qr_score'], ALL_EVENTS, { status: 'disabled' }), now)).toEqual([]);
    expect(deliveriesFor(trigger, subscription(['qr_score'], ALL_EVENTS, { authorization: elsewhere }), now)).toEqual([]);
  });

  test('when the same trigger is planned twice, then the keys are the same, and differ by type and by subscription', () => {
    const trigger = scoreChange(previous, latest);
    const first = deliveriesFor(trigger, subscription(['qr_score']), now);
    const again = deliveriesFor(trigger, subscription(['qr_score']), now);
    const other = deliveriesFor(trigger, subscription(['qr_score'], ALL_EVENTS, { id: 'wh_CCCCCCCCCCCCCCCCCCCCCCCC' }), now);

    expect(again.map((d) => d.key)).toEqual(first.map((d) => d.key));
    expect(new Set([...first, ...other].map((d) => d.key)).size).toBe(4);
    expect(first.map((d) => d.subscriptionId)).toEqual(['wh_BBBBBBBBBBBBBBBBBBBBBBBB', 'wh_BBBBBBBBBBBBBBBBBBBBBBBB']);
  });
});

describe('deliveriesFor the end of an authorization', () => {
  const ended = (): NotifierTrigger => {
    const trigger = triggerOf(revoked(2), { credential: credential(['qr_score']) });
    if (!trigger) throw new Error('expected the authorization to end');
    return trigger;
  };
  const endedAuthorization = (scopes: Scope[]) => credential(scopes, { status: 'revoked', revision: 2 });

  test.each<Scope[][]>([
    [['qr_score']],
    [['pillar_breakdown']],
    [['score_trend']],
    [['qr_score', 'pillar_breakdown']],
    [['qr_score', 'score_trend']],
    [['score_trend', 'pillar_breakdown']],
    [['qr_score', 'score_trend', 'pillar_breakdown']],
  ])('when the authorization held %j, then authorization.ended goes out once, whatever the scopes', (scopes) => {
    const deliveries = deliveriesFor(ended(), subscription(scopes, ALL_EVENTS, { authorization: endedAuthorization(scopes) }), now);

    expect(deliveries.map((delivery) => delivery.payload)).toEqual([
      {
        type: 'authorization.ended',
        timestamp: eventTime.toISOString(),
        data: { clientId, reason: 'revoked', endedAt: '2026-11-21T07:59:59.500Z' },
      },
    ]);
    expect(webhookPayloadSchema.parse(deliveries[0]?.payload)).toEqual(deliveries[0]?.payload);
  });

  test('when the subscription is not for authorization.ended, is disabled, or is another authorization’s, then nothing', () => {
    const authorization = endedAuthorization(['qr_score']);
    const other = { ...authorization, clientId: 'rs_ZZZZZZZZZZZZZZZZZZZZZZZZ' };

    expect(deliveriesFor(ended(), subscription(['qr_score'], ['score.updated', 'grade.changed'], { authorization }), now)).toEqual([]);
    expect(deliveriesFor(ended(), subscription(['qr_score'], ALL_EVENTS, { authorization, status: 'disabled' }), now)).toEqual([]);
    expect(deliveriesFor(ended(), subscription(['qr_score'], ALL_EVENTS, { authorization: other }), now)).toEqual([]);
  });
});

describe('scopesAllow and stillDeliverable', () => {
  test.each<[WebhookEventType, Scope[], boolean]>([
    ['score.updated', ['qr_score'], true],
    ['score.updated', ['score_trend', 'pillar_breakdown'], false],
    ['grade.changed', ['qr_score'], true],
    ['grade.changed', ['score_trend'], true],
    ['grade.changed', ['pillar_breakdown'], false],
    ['authorization.ended', ['pillar_breakdown'], true],
  ])('when the event is %s and the scopes are %j, then it is allowed: %s', (type, scopes, allowed) => {
    expect(scopesAllow(type, scopes)).toBe(allowed);
  });

  test('when a retry comes due after the authorization ended, then only authorization.ended is still delivered', () => {
    const active = credential(['qr_score']);
    const revokedNow = credential(['qr_score'], { status: 'revoked' });
    const pastExpiry = credential(['qr_score'], { expiresAt: now.toISOString() });

    expect(ALL_EVENTS.map((type) => stillDeliverable(type, active, now))).toEqual([true, true, true]);
    expect(ALL_EVENTS.map((type) => stillDeliverable(type, revokedNow, now))).toEqual([false, false, true]);
    expect(ALL_EVENTS.map((type) => stillDeliverable(type, pastExpiry, now))).toEqual([false, false, true]);
  });
});

describe("an access review's alerts (decision 54)", () => {
  const reviewId = 'arv_000000000000000000000001';
  const subscription = {
    id: 'wh_1',
    events: ['access_review.due_soon', 'access_review.completed'] as WebhookEventType[],
    status: 'active' as const,
  };

  test('when a review is due soon or completes, then the organization hears of it by review, in a payload its webhooks document, with no grant to bound it', () => {
    const dueSoon = anEvent(
      EVENT_TYPES.accessReviewDueSoon,
      { reviewId, organizationId, dueAt: '2026-11-24T08:00:00.000Z', at: eventTime.toISOString(), pending: 3, revision: 2 },
      { time: eventTime },
    );
    const completed = anEvent(
      EVENT_TYPES.accessReviewCompleted,
      { reviewId, organizationId, completedAt: eventTime.toISOString(), kept: 2, revoked: 1, revision: 6 },
      { time: eventTime },
    );

    const payloads = [dueSoon, completed].flatMap((event) =>
      alertDeliveriesFor(alertTriggerOf(event, {})!, subscription).map((planned) => planned.payload),
    );

    expect(payloads).toEqual([
      {
        type: 'access_review.due_soon',
        timestamp: eventTime.toISOString(),
        data: { reviewId, dueAt: '2026-11-24T08:00:00.000Z', pending: 3 },
      },
      {
        type: 'access_review.completed',
        timestamp: eventTime.toISOString(),
        data: { reviewId, completedAt: eventTime.toISOString(), kept: 2, revoked: 1 },
      },
    ]);
    for (const payload of payloads) expect(webhookPayloadSchema.safeParse(payload).success).toBe(true);
    expect(payloads.map((payload) => deliverableWithoutGrant(payload.type))).toEqual([true, true]);
    expect(deliverableWithoutGrant('authorization.key_leaked')).toBe(false);
  });
});
