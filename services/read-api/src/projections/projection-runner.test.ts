import { join } from 'node:path';
import { TOPICS, partitionKeyOf, topicOf, type DomainEvent } from '@rsd/contracts';
import { credentialView, currentScoreView, scoreHistoryView } from '@rsd/domain';
import { createMemoryViewStore, openSqliteEventLog } from '@rsd/embedded';
import { createLogger } from '@rsd/platform';
import { aStoreInATempDirectoryPerTest } from '@rsd/testkit';
import type { EventLog, EventRecord, ViewStore } from '@rsd/ports';
import {
  aCalculatedScore,
  authorizationCreatedEvent,
  authorizationExpiredEvent,
  authorizationRevokedEvent,
  scoreCalculatedEvent,
} from '../testing/read-api-fixtures';
import { startProjections } from './projection-runner';

const log = createLogger('read-api', 'silent');
const eventLog: EventLog = aStoreInATempDirectoryPerTest('read-api-projections', (dir) =>
  openSqliteEventLog({ file: join(dir, 'rsd.sqlite') }),
);

async function appendEvents(events: DomainEvent[]): Promise<void> {
  for (const event of events) {
    await eventLog.append(topicOf(event), [{ key: partitionKeyOf(event), value: JSON.stringify(event) }]);
  }
}

/** Runs the projections over everything in the log into `views`, then stops them. */
async function projectAll(views: ViewStore, groupId: string): Promise<void> {
  const subscription = await startProjections({ eventLog, views, log, groupId });
  await subscription.caughtUp;
  await subscription.close();
}

async function readTopic(topic: string): Promise<EventRecord[]> {
  const records: EventRecord[] = [];
  const subscription = await eventLog.subscribe({
    groupId: `reader-${topic}`,
    topics: [topic],
    fromBeginning: true,
    handle: (record) => {
      records.push(record);
      return Promise.resolve();
    },
  });
  await subscription.caughtUp;
  await subscription.close();
  return records;
}

/** Everything the read API can see, for the given Client IDs and organizations. */
async function snapshot(views: ViewStore, clientIds: string[], organizations: string[]) {
  return {
    credentials: await Promise.all(clientIds.map((id) => views.get(credentialView, id))),
    latest: await Promise.all(organizations.map((org) => views.get(currentScoreView, org))),
    history: await Promise.all(organizations.map((org) => views.list(scoreHistoryView, org, { limit: 366 }))),
  };
}

describe('projections', () => {
  test('when authorization and score events are in the log, then the views hold the credential and the score', async () => {
    const { event: created } = authorizationCreatedEvent({
      organizationId: 'acme',
      scopes: ['qr_score'],
      expiresAt: '2027-01-01T00:00:00.000Z',
    });
    const score = aCalculatedScore({ organizationId: 'acme' });
    const calculated = scoreCalculatedEvent(score);
    await appendEvents([created, calculated]);
    const views = createMemoryViewStore();

    await projectAll(views, 'read-api');

    expect(await views.get(credentialView, created.data.clientId)).toEqual({
      clientId: created.data.clientId,
      organizationId: 'acme',
      keyDigest: created.data.keyDigest,
      previousKeyDigest: null,
      previousKeyExpiresAt: null,
      allowedCidrs: null,
      scopes: ['qr_score'],
      status: 'active',
      expiresAt: '2027-01-01T00:00:00.000Z',
      recipientAccountId: null,
      recipientType: created.data.recipientType,
      recipientName: created.data.recipientName,
      createdEventId: created.id,
      revision: 1,
    });
    // The score and the event that carried it: a certificate names it (decision 55).
    expect(await views.get(currentScoreView, 'acme')).toEqual({ ...score, eventId: calculated.id });
  });

  test('when an authorization is revoked or expires, then its view says so', async () => {
    const revoked = authorizationCreatedEvent();
    const expired = authorizationCreatedEvent();
    await appendEvents([
      revoked.event,
      expired.event,
      authorizationRevokedEvent(revoked.event.data),
      authorizationExpiredEvent(expired.event.data),
    ]);
    const views = createMemoryViewStore();

    await projectAll(views, 'read-api');

    expect(await views.get(credentialView, revoked.event.data.clientId)).toMatchObject({ status: 'revoked', revision: 2 });
    expect(await views.get(credentialView, expired.event.data.clientId)).toMatchObject({ status: 'expired', revision: 2 });
  });

  test('when records are unusable, then each goes to the dead-letter topic and the next good event is still projected', async () => {
    const { event: good } = authorizationCreatedEvent();
    const { event: badDigest } = authorizationCreatedEvent();
    const scoreOnWrongTopic = scoreCalculatedEvent();
    const unusable = [
      { key: 'k1', value: '{not json' },
      { key: 'k2', value: JSON.stringify({ ...good, type: 'com.example.unknown.v1' }) },
      { key: 'k3', value: JSON.stringify({ ...badDigest, data: { ...badDigest.data, keyDigest: 'the-raw-key' } }) },
      { key: 'k4', value: JSON.stringify(scoreOnWrongTopic) },
    ];
    await eventLog.append(TOPICS.authorizations, unusable);
    await eventLog.append(TOPICS.scores, [{ key: 'k5', value: JSON.stringify([1, 2, 3]) }]);
    await appendEvents([good]);
    const views = createMemoryViewStore();

    await projectAll(views, 'read-api');

    const deadLetters = (await readTopic(TOPICS.deadLetter)).map((record): unknown => JSON.parse(record.value));
    expect(deadLetters).toEqual([
      { reason: 'the value is not JSON', topic: TOPICS.authorizations, partition: 0, offset: '1', key: 'k1', value: '{not json' },
      {
        reason: expect.stringMatching(/^not a valid event: type: /),
        topic: TOPICS.authorizations,
        partition: 0,
        offset: '2',
        key: 'k2',
        value: unusable[1]?.value,
      },
      {
        reason: expect.stringMatching(/^not a valid event: data\.keyDigest: /),
        topic: TOPICS.authorizations,
        partition: 0,
        offset: '3',
        key: 'k3',
        value: unusable[2]?.value,
      },
      {
        reason: `a ${scoreOnWrongTopic.type} event does not belong on ${TOPICS.authorizations}`,
        topic: TOPICS.authorizations,
        partition: 0,
        offset: '4',
        key: 'k4',
        value: unusable[3]?.value,
      },
      {
        reason: expect.stringMatching(/^not a valid event: /),
        topic: TOPICS.scores,
        partition: 0,
        offset: '5',
        key: 'k5',
        value: '[1,2,3]',
      },
    ]);
    expect(await views.get(credentialView, good.data.clientId)).toMatchObject({ status: 'active' });
    expect(await views.get(credentialView, badDigest.data.clientId)).toBeUndefined();
    expect(await views.get(currentScoreView, scoreOnWrongTopic.data.organizationId)).toBeUndefined();
  });

  test('when records arrive while the projections run, then they are projected by the time append resolves', async () => {
    const views = createMemoryViewStore();
    const subscription = await startProjections({ eventLog, views, log });
    try {
      await subscription.caughtUp;
      const { event } = authorizationCreatedEvent();

      await eventLog.append(TOPICS.authorizations, [{ key: 'x', value: 'garbage' }]);
      await appendEvents([event]);

      expect(await views.get(credentialView, event.data.clientId)).toMatchObject({ status: 'active' });
      expect(await readTopic(TOPICS.deadLetter)).toHaveLength(1);
    } finally {
      await subscription.close();
    }
  });

  test('when run twice, then the projections are idempotent', async () => {
    const first = authorizationCreatedEvent({ organizationId: 'acme' });
    const second = authorizationCreatedEvent({ organizationId: 'acme', expiresAt: '2026-12-01T00:00:00.000Z' });
    const events: DomainEvent[] = [
      first.event,
      second.event,
      authorizationRevokedEvent(first.event.data),
      scoreCalculatedEvent({ organizationId: 'acme', scoreDate: '2026-11-20', score: 70, calculatedAt: '2026-11-20T06:00:00.000Z' }),
      scoreCalculatedEvent({ organizationId: 'acme', scoreDate: '2026-11-20', score: 74, calculatedAt: '2026-11-20T09:00:00.000Z' }),
      scoreCalculatedEvent({ organizationId: 'acme', scoreDate: '2026-11-18', score: 50, calculatedAt: '2026-11-21T00:00:00.000Z' }),
      scoreCalculatedEvent({ organizationId: 'beta', scoreDate: '2026-11-19', score: 90, grade: 'Sustain' }),
    ];
    // Duplicates as an at-least-once log delivers them: the Created again after its Revoked, a score again.
    await appendEvents([...events, first.event, events[3] as DomainEvent]);
    const clientIds = [first.event.data.clientId, second.event.data.clientId];
    const organizations = ['acme', 'beta'];

    const views = createMemoryViewStore();
    await projectAll(views, 'first-run');
    const afterFirstRun = await snapshot(views, clientIds, organizations);
    await projectAll(views, 'second-run');
    const afterSecondRun = await snapshot(views, clientIds, organizations);
    const freshViews = createMemoryViewStore();
    await projectAll(freshViews, 'rebuild');
    const rebuilt = await snapshot(freshViews, clientIds, organizations);

    expect(afterFirstRun.credentials.map((view) => view?.status)).toEqual(['revoked', 'active']);
    expect(afterFirstRun.latest.map((score) => score?.score)).toEqual([74, 90]);
    expect(afterFirstRun.history[0]?.map((score) => score.score)).toEqual([74, 50]);
    expect(afterSecondRun).toEqual(afterFirstRun);
    expect(rebuilt).toEqual(afterFirstRun);
  });
});
