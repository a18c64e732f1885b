import { authorizationCreatedSchema, authorizationJoinedAccountSchema, authorizationRevokedSchema } from '@rsd/contracts';
import { anAuthorizationRecord } from '@rsd/testkit';
import { acceptsOffersFrom, decideAutoAccept, newRecipientAccount } from '../accounts/recipient-account';
import { authorizationCreated } from './authorization-events';
import { statusOf, type StoredAuthorization } from './authorization-record';
import { decideAcceptOffer, decideDeclineOffer, decideNewClaimLink, decideRevoke, decideRotate, toAuthorization } from './deciders';

const ACCOUNT = { accountId: 'rcp_7Hq2LmX9pRt4Kc8Vw1Nz3Bd6', name: 'Example Insurance book' };
const OTHER_ACCOUNT = { accountId: 'rcp_Zz2LmX9pRt4Kc8Vw1Nz3Bd6Q', name: 'Someone else' };
const CREATED = '2026-11-20T10:00:00.000Z';
const LATER = '2026-11-21T10:00:00.000Z';
const NO_USAGE = { lastUsedAt: null, usage: { last24h: 0, last30d: 0 } };

/** A grant offered to ACCOUNT (`keyDelivery: "account"`), as the credentials service stores it before any answer. */
const anOffer = (overrides: Partial<StoredAuthorization> = {}): StoredAuthorization =>
  anAuthorizationRecord({
    recipientType: 'insurance_provider',
    keyDigest: null,
    expiresAt: '2026-12-01T00:00:00.000Z',
    offeredAccountId: ACCOUNT.accountId,
    createdAt: CREATED,
    ...overrides,
  });

const stamp = (iso: string) => ({ id: 'event-1', time: new Date(iso) });

describe('a grant offered to a recipient account', () => {
  test('when it waits for the account, then it is pending, names the account only by the id the organization gave, and has not been taken', () => {
    const offer = anOffer();

    expect(statusOf(offer, new Date(LATER))).toBe('pending');
    expect(toAuthorization(offer, new Date(LATER), NO_USAGE)).toMatchObject({
      status: 'pending',
      recipientAccountId: ACCOUNT.accountId,
      recipientAccountName: null,
      keyClaimed: false,
    });
  });

  test('when its Created event is made, then it names no account, so the read API gives it to no key', () => {
    const event = authorizationCreated(anOffer(), stamp(CREATED));

    expect(authorizationCreatedSchema.parse(event).data).toMatchObject({ keyDigest: null, recipientAccountId: null });
  });

  test.each([
    ['revoked', anOffer({ revokedAt: LATER, revocationReason: 'organization' }), 'revoked'],
    ['declined', anOffer({ revokedAt: LATER, revocationReason: 'declined_by_recipient' }), 'revoked'],
    ['marked expired', anOffer({ expiredAt: '2026-12-01T00:00:01.000Z' }), 'expired'],
    ['past its expiry but not yet marked', anOffer({ expiresAt: '2026-11-21T00:00:00.000Z' }), 'expired'],
  ])('when it has been %s, then its status says so rather than pending', (_name, record, status) => {
    expect(statusOf(record, new Date(LATER))).toBe(status);
  });

  test('when the account accepts it, then the account holds it by the event a claim into the account makes, and its name shows', () => {
    const decision = decideAcceptOffer(anOffer(), ACCOUNT, stamp(LATER));

    expect(decision.outcome).toBe('changed');
    if (decision.outcome !== 'changed') return;
    expect(decision.record).toMatchObject({ recipientAccountId: ACCOUNT.accountId, recipientAccountName: ACCOUNT.name, revision: 2 });
    expect(authorizationJoinedAccountSchema.parse(decision.event)).toMatchObject({
      type: 'com.resiliencescore.authorization.joined-account.v1',
      data: {
        clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
        organizationId: 'acme',
        recipientAccountId: ACCOUNT.accountId,
        recipientType: 'insurance_provider',
        scopes: ['qr_score'],
        expiresAt: '2026-12-01T00:00:00.000Z',
        joinedAt: LATER,
        revision: 2,
      },
    });
    expect(statusOf(decision.record, new Date(LATER))).toBe('active');
    expect(toAuthorization(decision.record, new Date(LATER), NO_USAGE)).toMatchObject({
      recipientAccountName: ACCOUNT.name,
      keyClaimed: true,
    });
  });

  test('when it is accepted again, then nothing changes; declined after, it is no longer pending (the account releases it instead)', () => {
    const accepted = decideAcceptOffer(anOffer(), ACCOUNT, stamp(LATER)).record;

    expect(decideAcceptOffer(accepted, ACCOUNT, stamp(LATER))).toEqual({ outcome: 'unchanged', record: accepted });
    expect(decideDeclineOffer(accepted, ACCOUNT, stamp(LATER))).toEqual({ outcome: 'notPending', record: accepted });
  });

  test('when the account declines it, then it is revoked as declined by the recipient, with the Revoked event any revocation owes', () => {
    const decision = decideDeclineOffer(anOffer(), ACCOUNT, stamp(LATER));

    expect(decision.outcome).toBe('changed');
    if (decision.outcome !== 'changed') return;
    expect(decision.record).toMatchObject({ revokedAt: LATER, revocationReason: 'declined_by_recipient', revision: 2 });
    expect(authorizationRevokedSchema.parse(decision.event).data).toMatchObject({ revocationReason: 'declined_by_recipient', revision: 2 });
    expect(toAuthorization(decision.record, new Date(LATER), NO_USAGE)).toMatchObject({
      status: 'revoked',
      revocationReason: 'declined_by_recipient',
      recipientAccountId: ACCOUNT.accountId,
      recipientAccountName: null,
    });
    expect(decideDeclineOffer(decision.record, ACCOUNT, stamp(LATER))).toEqual({ outcome: 'unchanged', record: decision.record });
    expect(decideAcceptOffer(decision.record, ACCOUNT, stamp(LATER))).toEqual({ outcome: 'notPending', record: decision.record });
  });

  test.each([
    ['revoked by its organization', anOffer({ revokedAt: LATER, revocationReason: 'organization' })],
    ['past its expiry', anOffer({ expiresAt: '2026-11-21T00:00:00.000Z' })],
    ['marked expired', anOffer({ expiredAt: '2026-11-21T00:00:00.000Z' })],
  ])('when an offer %s is answered, then neither answer changes it', (_name, record) => {
    expect(decideAcceptOffer(record, ACCOUNT, stamp(LATER))).toEqual({ outcome: 'notPending', record });
    expect(decideDeclineOffer(record, ACCOUNT, stamp(LATER))).toEqual({ outcome: 'notPending', record });
  });

  test.each([
    ['offered to another account', anOffer({ offeredAccountId: OTHER_ACCOUNT.accountId })],
    ['never offered (a key of its own)', anOffer({ offeredAccountId: null, keyDigest: 'a'.repeat(64) })],
    ['claimed into the account by a link', anOffer({ offeredAccountId: null, recipientAccountId: ACCOUNT.accountId })],
  ])('when a grant %s is answered by the account, then it is not its offer', (_name, record) => {
    expect(decideAcceptOffer(record, ACCOUNT, stamp(LATER))).toEqual({ outcome: 'notOffered', record });
    expect(decideDeclineOffer(record, ACCOUNT, stamp(LATER))).toEqual({ outcome: 'notOffered', record });
  });

  test('when the organization revokes a pending offer, then it is revoked as any grant', () => {
    const decision = decideRevoke(anOffer(), stamp(LATER));

    expect(decision).toMatchObject({ outcome: 'changed', record: { revokedAt: LATER, revocationReason: 'organization' } });
  });

  test('when the organization asks a pending offer for a key or a claim link, then it is refused as a grant an account reads', () => {
    expect(decideRotate(anOffer(), { newKeyDigest: 'b'.repeat(64), overlapSeconds: 0 }, stamp(LATER)).outcome).toBe('heldByAccount');
    expect(decideNewClaimLink(anOffer(), { tokenDigest: 'c'.repeat(64), validSeconds: 3600 }, new Date(LATER)).outcome).toBe('offered');
  });
});

describe("an account's automatic acceptance", () => {
  test('when it names organizations, then their offers are accepted, no other, and the list replaces the one before', () => {
    const account = newRecipientAccount({ ...ACCOUNT, keyDigest: 'd'.repeat(64), now: new Date(CREATED) });
    expect(acceptsOffersFrom(account, 'acme')).toBe(false);

    const trusting = decideAutoAccept(account, ['acme', 'globex']);
    const changed = decideAutoAccept(trusting, ['globex']);

    expect(trusting).toMatchObject({ autoAcceptOrganizationIds: ['acme', 'globex'], revision: 2 });
    expect(acceptsOffersFrom(trusting, 'acme')).toBe(true);
    expect(acceptsOffersFrom(trusting, 'initech')).toBe(false);
    expect(acceptsOffersFrom(changed, 'acme')).toBe(false);
    expect(acceptsOffersFrom(changed, 'globex')).toBe(true);
  });
});
