import { EVENT_TYPES, recipientErasedSchema } from '@rsd/contracts';
import { aStoredAuthorization, anEvent, authorizationCreatedEvent, authorizationRevokedEvent } from '@rsd/testkit';
import { credentialView } from '../views/credential-view';
import { recipientAccountView } from '../views/account-views';
import {
  grantSubject,
  offboardingKept,
  offboardingOf,
  organizationPurgedBy,
  startedOffboarding,
  withoutRecipientData,
  withPurge,
} from './erasure';

const at = new Date('2026-12-02T10:00:00.000Z');
const later = (seconds: number) => new Date(at.getTime() + seconds * 1000);

describe('decision 56: a recipient erased', () => {
  const account = {
    accountId: 'rcp_AAAAAAAAAAAAAAAAAAAAAAAA',
    name: 'Ada',
    keyDigest: 'a'.repeat(64),
    previousKeyDigest: null,
    previousKeyExpiresAt: null,
    revision: 1,
  };

  test("when a grant's recipient is erased, then its name and every address go and the rest of the grant stays", () => {
    const grant = aStoredAuthorization({
      recipientName: 'Ada Lovelace',
      recipientAccountName: 'Ada',
      claimedFromAddress: '203.0.113.9',
      activity: {
        firstUsedAt: at.toISOString(),
        addresses: [{ address: '198.51.100.1', seenAt: at.toISOString() }],
        failures: [],
        failuresAlertedAt: null,
        expiryNotices: [],
      },
      alerts: [{ id: 'alr_AAAAAAAAAAAAAAAA', type: 'authorization.first_use', at: at.toISOString(), address: '198.51.100.1' }],
    });

    const erased = withoutRecipientData(grant);

    expect(JSON.stringify(erased)).not.toMatch(/Ada|203\.0\.113\.9|198\.51\.100\.1/);
    expect(erased).toEqual({
      ...grant,
      recipientName: null,
      recipientAccountName: null,
      claimedFromAddress: null,
      activity: { ...grant.activity, addresses: [] },
      alerts: [{ id: 'alr_AAAAAAAAAAAAAAAA', type: 'authorization.first_use', at: at.toISOString() }],
    });
  });

  test("a grant's recipient data is the grant's subject, whoever holds it", () => {
    expect(grantSubject('rs_AAAAAAAAAAAAAAAAAAAAAAAA')).toBe('grant:rs_AAAAAAAAAAAAAAAAAAAAAAAA');
  });

  test('when the credential view hears of the erasure, then its name goes for good, even under a later event and a replay', () => {
    const { event: fixture } = authorizationCreatedEvent();
    const created = { ...fixture, data: { ...fixture.data, recipientName: 'Ada Lovelace' } };
    const { clientId, organizationId } = created.data;
    const erasure = anEvent(EVENT_TYPES.recipientErased, { clientId, organizationId, subject: `grant:${clientId}` }, { time: at });
    const before = credentialView.evolve(undefined, created)!;

    const erased = credentialView.evolve(before, erasure)!;
    const revoked = credentialView.evolve(erased, authorizationRevokedEvent({ clientId, organizationId }))!;

    expect(erased.recipientName).toBeNull();
    expect(credentialView.versionOf(erased) > credentialView.versionOf(before)).toBe(true);
    expect(revoked).toMatchObject({ recipientName: null, status: 'revoked' });
    expect(credentialView.versionOf(revoked) > credentialView.versionOf(erased)).toBe(true);
    // The Created event delivered again is older than what the view holds.
    expect(credentialView.evolve(erased, created)).toBe(erased);
  });

  test("when an account's own data is erased, then its view loses the name; a grant's erasure leaves accounts alone", () => {
    const erasure = (subject: string) =>
      anEvent(EVENT_TYPES.recipientErased, { clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', organizationId: 'acme', subject }, { time: at });

    expect(recipientAccountView.keyOf(erasure(`account:${account.accountId}`))).toBe(account.accountId);
    expect(recipientAccountView.evolve(account, erasure(`account:${account.accountId}`))).toMatchObject({ name: null });
    expect(recipientAccountView.keyOf(erasure('grant:rs_AAAAAAAAAAAAAAAAAAAAAAAA'))).not.toBe(account.accountId);
  });

  test("when an account's own erasure is heard (it names the account alone, held grants or not), then the account's view loses its name and no grant's view is touched", () => {
    const erasure = anEvent(
      EVENT_TYPES.recipientErased,
      { accountId: account.accountId, subject: `account:${account.accountId}` },
      { time: at },
    );

    expect(recipientErasedSchema.safeParse(erasure).success).toBe(true);
    expect(recipientAccountView.keyOf(erasure)).toBe(account.accountId);
    expect(recipientAccountView.evolve(account, erasure)).toMatchObject({ name: null, recipientErased: true });
    expect(credentialView.keyOf(erasure)).toBeUndefined();
    expect(erasure.subject).toBe(account.accountId);
  });
});

describe("decision 56: an organization's offboarding", () => {
  test('it is pending until every service has purged, then done at the last purge, kept 30 days, and told twice changes nothing', () => {
    let record = startedOffboarding('acme', at);
    record = withPurge(record, 'credentials', later(1));
    record = withPurge(record, 'read-api', later(2));
    expect(offboardingOf(record)).toEqual({ status: 'pending', startedAt: at.toISOString(), doneAt: null });

    const done = withPurge(record, 'notifier', later(3));

    expect(offboardingOf(done)).toEqual({ status: 'done', startedAt: at.toISOString(), doneAt: later(3).toISOString() });
    expect(withPurge(done, 'read-api', later(9))).toBe(done);
    expect(offboardingKept(done, new Date(later(3).getTime() + 30 * 86_400_000 - 1))).toBe(true);
    expect(offboardingKept(done, new Date(later(3).getTime() + 30 * 86_400_000))).toBe(false);
    expect(offboardingKept(record, new Date(at.getTime() + 3650 * 86_400_000))).toBe(true);
  });

  test('every service purges on the offboarding event, and on no other', () => {
    const offboarded = anEvent(EVENT_TYPES.organizationOffboarded, { organizationId: 'acme', startedAt: at.toISOString() }, { time: at });

    expect(organizationPurgedBy(offboarded)).toBe('acme');
    expect(
      organizationPurgedBy(authorizationRevokedEvent({ clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', organizationId: 'acme' })),
    ).toBeUndefined();
  });
});
