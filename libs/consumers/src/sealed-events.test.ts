import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_TYPES, TOPICS, topicOf, type DomainEvent } from '@rsd/contracts';
import { openSqliteSubjectKeyStore } from '@rsd/embedded';
import { subjectCipher } from '@rsd/platform';
import { aFixturePerTest, anEvent, authorizationCreatedEvent, scoreCalculatedEvent } from '@rsd/testkit';
import { parseRecord } from './parse-record';
import { openRecord, sealValue } from './sealed-events';

const NAME = 'Jane Roe Insurance';
const CIDR = '203.0.113.0/24';
const ADDRESS = '198.51.100.23';
const AUDIT = {
  action: 'authorization.created',
  actor: { type: 'person', id: 'https://idp|jane.roe', via: 'console' },
  requestId: 'r1',
  address: ADDRESS,
} as const;

const written = (event: DomainEvent) => JSON.stringify(event);
/** A recipient account's id (`rcp_` and 24 letters or digits). */
const JANE = `rcp_${'J'.repeat(24)}`;
const JOHN = `rcp_${'K'.repeat(24)}`;
const recordOf = (event: DomainEvent, value: string) => ({ topic: topicOf(event), value });

describe('sealed events (decision 56)', () => {
  // A key store of its own for each test, and the cipher over it.
  const keys = aFixturePerTest(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rsd-sealed-events-'));
    const store = openSqliteSubjectKeyStore({ file: join(dir, 'subject-keys.db') });
    return {
      store,
      cipher: subjectCipher({ store, masterKey: randomBytes(32) }),
      cleanup: async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });

  const grantOfAcme = (recipientAccountId: string | null = null) => {
    const { event } = authorizationCreatedEvent({ organizationId: 'acme', allowedCidrs: [CIDR] });
    return { ...event, data: { ...event.data, recipientName: NAME, recipientAccountId, audit: AUDIT } };
  };

  it('when an event is written, then its name, address, allow list and audit stamp are ciphertext, and it opens to the same event', async () => {
    const event = grantOfAcme();

    const value = await sealValue(written(event), keys.cipher);

    expect(value).not.toMatch(/Jane|203\.0\.113|198\.51\.100|jane\.roe/);
    const sealed = JSON.parse(value) as { rsdsealed: number; data: { sealed: { subject: string }[] } };
    expect(sealed.rsdsealed).toBe(1);
    expect(sealed.data.sealed.map((part) => part.subject)).toEqual(['organization:acme', `grant:${event.data.clientId}`]);
    expect(value.startsWith('{"specversion":')).toBe(true);
    expect(await openRecord(recordOf(event, value), keys.cipher)).toEqual({ parsed: { event } });
    // Read past the log that opens it, a sealed event is no event (never a half-read one).
    expect(parseRecord({ ...recordOf(event, value), partition: 0, offset: '1', key: null })).toEqual({
      reason: 'a sealed event, read past the log that opens it',
    });
  });

  it("when a score is written, then its value, grade and pillars are the organization's ciphertext; its date stays in clear", async () => {
    const event = scoreCalculatedEvent({ score: 73 });

    const value = await sealValue(written(event), keys.cipher);

    const data = (JSON.parse(value) as { data: Record<string, unknown> }).data;
    expect(Object.keys(data).sort()).toEqual(['calculatedAt', 'organizationId', 'scoreDate', 'sealed']);
    expect(await openRecord(recordOf(event, value), keys.cipher)).toEqual({ parsed: { event } });
  });

  it('when an event was written before sealing (plaintext), then it still parses as it is', async () => {
    const event = grantOfAcme();

    expect(await openRecord(recordOf(event, written(event)), keys.cipher)).toEqual({ parsed: { event } });
  });

  it("when the organization's key is destroyed, then its events answer erased, and another organization's still open", async () => {
    const acme = await sealValue(written(grantOfAcme()), keys.cipher);
    const globexEvent = scoreCalculatedEvent({ organizationId: 'globex' });
    const globex = await sealValue(written(globexEvent), keys.cipher);
    const score = scoreCalculatedEvent();
    const acmeScore = await sealValue(written(score), keys.cipher);

    await keys.store.destroy('organization:acme', '2026-12-02T11:00:00.000Z');
    keys.cipher.forget('organization:acme');

    const opened = await openRecord({ topic: TOPICS.scores, value: acmeScore }, keys.cipher);
    expect(opened).toEqual({ parsed: { erased: { type: EVENT_TYPES.scoreCalculated, id: score.id, subject: 'organization:acme' } } });
    expect(await openRecord({ topic: TOPICS.authorizations, value: acme }, keys.cipher)).toMatchObject({ parsed: { erased: {} } });
    expect(await openRecord({ topic: TOPICS.scores, value: globex }, keys.cipher)).toEqual({ parsed: { event: globexEvent } });
  });

  it("when a recipient's key is destroyed, then its name comes back null and the event names the erasure; the grant stays", async () => {
    const event = grantOfAcme();
    const value = await sealValue(written(event), keys.cipher);
    const grant = `grant:${event.data.clientId}`;

    await keys.store.destroy(grant, '2026-12-02T11:00:00.000Z');
    keys.cipher.forget(grant);

    expect(await openRecord(recordOf(event, value), keys.cipher)).toEqual({
      parsed: { event: { ...event, data: { ...event.data, recipientName: null } }, erasedSubjects: [grant] },
    });
  });

  it("when a grant an account holds is written, then its recipient's name is the grant's: destroying the account's key leaves it, the grant's erases it (a part written under the account still opens)", async () => {
    const event = grantOfAcme(JANE);
    const value = await sealValue(written(event), keys.cipher);

    const sealed = JSON.parse(value) as { data: { sealed: { subject: string }[] } };
    expect(sealed.data.sealed.map((part) => part.subject)).toEqual(['organization:acme', `grant:${event.data.clientId}`]);
    // The account's key gone: the name the organization gave its grant stays until the grant's own key goes.
    await keys.store.destroy(`account:${JANE}`, '2026-12-02T11:00:00.000Z');
    keys.cipher.forget(`account:${JANE}`);
    expect(await openRecord(recordOf(event, value), keys.cipher)).toEqual({ parsed: { event } });
    await keys.store.destroy(`grant:${event.data.clientId}`, '2026-12-02T11:00:00.000Z');
    keys.cipher.forget(`grant:${event.data.clientId}`);
    expect(await openRecord(recordOf(event, value), keys.cipher)).toMatchObject({
      parsed: { event: { data: { recipientName: null } }, erasedSubjects: [`grant:${event.data.clientId}`] },
    });
    // A part written under the holding account (the rule before) still opens.
    const before = grantOfAcme(JOHN);
    const { sealed: underAccount } = (await keys.cipher.seal(`account:${JOHN}`, { recipientName: NAME })) as { sealed: object };
    const sealedBefore = JSON.parse(await sealValue(written(before), keys.cipher)) as { data: { sealed: object[] } };
    sealedBefore.data.sealed[1] = underAccount;
    expect(await openRecord(recordOf(before, JSON.stringify(sealedBefore)), keys.cipher)).toEqual({ parsed: { event: before } });
  });

  it('when a subject is already erased as an event is written, then nothing of it is written, and the event reads as erased', async () => {
    await keys.store.destroy('organization:acme', '2026-12-02T11:00:00.000Z');
    const event = scoreCalculatedEvent({ score: 91 });

    const value = await sealValue(written(event), keys.cipher);

    expect((JSON.parse(value) as { data: { sealed: unknown[] } }).data.sealed).toEqual([{ subject: 'organization:acme', erased: true }]);
    expect(value).not.toContain('"score"');
    expect(await openRecord(recordOf(event, value), keys.cipher)).toMatchObject({ parsed: { erased: { subject: 'organization:acme' } } });
  });

  it('when a sealed part is changed or moved to a subject the event does not name, then the record is invalid, never opened', async () => {
    const event = grantOfAcme();
    const value = JSON.parse(await sealValue(written(event), keys.cipher)) as {
      data: { organizationId: string; sealed: { ciphertext: string }[] };
    };
    const tampered = structuredClone(value);
    tampered.data.sealed[0]!.ciphertext = `A${tampered.data.sealed[0]!.ciphertext.slice(1)}`;
    const moved = structuredClone(value);
    moved.data.organizationId = 'globex';

    expect(await openRecord(recordOf(event, JSON.stringify(tampered)), keys.cipher)).toEqual({
      parsed: { reason: 'sealed value cannot be opened (tampered, subject organization:acme)' },
    });
    expect(await openRecord(recordOf(event, JSON.stringify(moved)), keys.cipher)).toEqual({
      parsed: { reason: 'a sealed part for a subject the event does not name' },
    });
  });

  it('when an erasure event is read, then the keys.cipher forgets the subject at once: a key destroyed elsewhere stops opening', async () => {
    const event = grantOfAcme();
    const value = await sealValue(written(event), keys.cipher);
    expect(await openRecord(recordOf(event, value), keys.cipher)).toMatchObject({ parsed: { event: {} } });
    // Destroyed by another process: this one's keys.cipher still holds the key it opened.
    await keys.store.destroy('organization:acme', '2026-12-02T11:00:00.000Z');
    expect(await openRecord(recordOf(event, value), keys.cipher)).toMatchObject({ parsed: { event: {} } });

    const offboarded = { specversion: '1.0', type: EVENT_TYPES.organizationOffboarded, data: { organizationId: 'acme' } };
    const seen = await openRecord({ topic: TOPICS.authorizations, value: JSON.stringify(offboarded) }, keys.cipher);

    expect(seen.forgot).toEqual(['organization:acme']);
    expect(await openRecord(recordOf(event, value), keys.cipher)).toMatchObject({ parsed: { erased: { subject: 'organization:acme' } } });
  });

  it("when a recipient's erasure is read, then the cipher forgets at once the key it names, and the grant's (an earlier erasure named the account)", async () => {
    const link = grantOfAcme();
    const value = await sealValue(written(link), keys.cipher);
    const grant = `grant:${link.data.clientId}`;
    // Destroyed by another process: this one's cipher still holds the key.
    await keys.store.destroy(grant, '2026-12-02T11:00:00.000Z');
    expect(await openRecord(recordOf(link, value), keys.cipher)).toEqual({ parsed: { event: link } });
    const time = { time: new Date('2026-12-02T11:00:00.000Z') };
    const erasure = (data: { organizationId: string; clientId: string; subject: string } | { accountId: string; subject: string }) => {
      const event = anEvent(EVENT_TYPES.recipientErased, data, time);
      return openRecord(recordOf(event, written(event)), keys.cipher);
    };

    const seen = await erasure({ organizationId: 'acme', clientId: link.data.clientId, subject: grant });

    expect(seen.forgot).toEqual([grant]);
    const { parsed } = await openRecord(recordOf(link, value), keys.cipher);
    expect('event' in parsed && parsed.event.type === EVENT_TYPES.authorizationCreated && parsed.event.data.recipientName).toBeNull();
    expect((await erasure({ organizationId: 'acme', clientId: link.data.clientId, subject: `account:${JANE}` })).forgot).toEqual([
      `account:${JANE}`,
      grant,
    ]);
    // An account's own erasure names its account alone.
    expect((await erasure({ accountId: JANE, subject: `account:${JANE}` })).forgot).toEqual([`account:${JANE}`]);
  });

  it('when a record is no event or has nothing to seal, then it is written as it is', async () => {
    const dueSoon = anEvent(
      EVENT_TYPES.accessReviewDueSoon,
      {
        reviewId: 'rev_1',
        organizationId: 'acme',
        dueAt: '2026-12-05T00:00:00.000Z',
        at: '2026-12-02T00:00:00.000Z',
        pending: 2,
        revision: 2,
      },
      { time: new Date('2026-12-02T00:00:00.000Z') },
    );

    expect(await sealValue('not json', keys.cipher)).toBe('not json');
    expect(await sealValue('{"original":{"recipientName":"x"}}', keys.cipher)).toBe('{"original":{"recipientName":"x"}}');
    expect(await sealValue(written(dueSoon), keys.cipher)).toBe(written(dueSoon));
  });
});
