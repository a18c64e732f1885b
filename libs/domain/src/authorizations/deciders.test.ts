import {
  authorizationExpiredSchema,
  authorizationKeyClaimedSchema,
  authorizationKeyRotatedSchema,
  authorizationRevokedSchema,
} from '@rsd/contracts';
import { anAuthorizationRecord } from '@rsd/testkit';
import type { StoredAuthorization } from './authorization-record';
import { claimLinkStateOf, decideClaim, decideExpire, decideNewClaimLink, decideRevoke, decideRotate, toAuthorization } from './deciders';

const CREATED = new Date('2026-11-20T10:00:00.000Z');

const anAuthorization = (overrides: Partial<StoredAuthorization> = {}): StoredAuthorization =>
  anAuthorizationRecord({ expiresAt: '2026-12-01T00:00:00.000Z', createdAt: CREATED.toISOString(), ...overrides });

const stamp = (iso: string) => ({ id: 'event-1', time: new Date(iso) });

describe('authorization decisions', () => {
  test('when an active authorization is revoked, then the next revision is revoked and owes a Revoked event', () => {
    const decision = decideRevoke(anAuthorization(), stamp('2026-11-25T00:00:00.000Z'));

    expect(decision.outcome).toBe('changed');
    if (decision.outcome !== 'changed') return;
    expect(decision.record).toMatchObject({ revokedAt: '2026-11-25T00:00:00.000Z', revision: 2 });
    expect(authorizationRevokedSchema.parse(decision.event).data).toEqual({
      clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
      organizationId: 'acme',
      revokedAt: '2026-11-25T00:00:00.000Z',
      revision: 2,
      revocationReason: 'organization',
    });
  });

  test.each([
    ['already revoked', anAuthorization({ revokedAt: '2026-11-21T00:00:00.000Z', revision: 2 }), '2026-11-25T00:00:00.000Z'],
    ['marked expired', anAuthorization({ expiredAt: '2026-12-01T00:00:01.000Z', revision: 2 }), '2026-12-02T00:00:00.000Z'],
    ['past its expiry but not yet marked', anAuthorization(), '2026-12-01T00:00:00.000Z'],
  ])('when an authorization %s is revoked, then nothing changes', (_name, record, at) => {
    expect(decideRevoke(record, stamp(at))).toEqual({ outcome: 'unchanged', record });
  });

  test('when the expiry has passed, then the next revision is marked expired now and owes an Expired event', () => {
    const decision = decideExpire(anAuthorization(), stamp('2026-12-01T00:00:02.000Z'));

    expect(decision.outcome).toBe('changed');
    if (decision.outcome !== 'changed') return;
    expect(decision.record).toMatchObject({ expiredAt: '2026-12-01T00:00:02.000Z', revision: 2 });
    expect(authorizationExpiredSchema.parse(decision.event).data).toMatchObject({ expiredAt: '2026-12-01T00:00:02.000Z', revision: 2 });
  });

  test.each([
    ['before its expiry', anAuthorization(), '2026-11-30T23:59:59.999Z'],
    ['without an expiry', anAuthorization({ expiresAt: null }), '2099-01-01T00:00:00.000Z'],
    ['already revoked', anAuthorization({ revokedAt: '2026-11-21T00:00:00.000Z', revision: 2 }), '2026-12-02T00:00:00.000Z'],
    ['already marked', anAuthorization({ expiredAt: '2026-12-01T00:00:00.000Z', revision: 2 }), '2026-12-02T00:00:00.000Z'],
  ])('when an authorization %s is checked for expiry, then nothing changes', (_name, record, at) => {
    expect(decideExpire(record, stamp(at)).outcome).toBe('unchanged');
  });

  test('when a record becomes a resource, then the digest and bookkeeping stay inside, the status is computed and the usage given is carried', () => {
    const usage = { lastUsedAt: '2026-11-30T10:00:00.000Z', usage: { last24h: 3, last30d: 40 } };

    const resource = toAuthorization(anAuthorization(), new Date('2026-12-01T00:00:00.000Z'), usage);

    expect(resource).toEqual({
      clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
      organizationId: 'acme',
      recipientType: 'auditor',
      recipientName: null,
      scopes: ['qr_score'],
      expiresAt: '2026-12-01T00:00:00.000Z',
      status: 'expired',
      createdAt: CREATED.toISOString(),
      revokedAt: null,
      allowedCidrs: null,
      lastUsedAt: '2026-11-30T10:00:00.000Z',
      usage: { last24h: 3, last30d: 40 },
      keyClaimed: true,
      claimedAt: null,
      claimedFromAddress: null,
      revocationReason: null,
      recipientAccountId: null,
      recipientAccountName: null,
    });
  });
});

describe('key rotation (decision 19)', () => {
  const NEW = 'b'.repeat(64);
  const at = '2026-11-25T12:00:00.000Z';

  test('when an active authorization is rotated, then the new digest is current, the old one valid for the overlap, and the event carries digests only', () => {
    const decision = decideRotate(anAuthorization({ expiresAt: null }), { newKeyDigest: NEW, overlapSeconds: 3600 }, stamp(at));

    expect(decision.outcome).toBe('changed');
    if (decision.outcome !== 'changed') return;
    expect(decision.record).toMatchObject({
      keyDigest: NEW,
      previousKeyDigest: 'a'.repeat(64),
      previousKeyExpiresAt: '2026-11-25T13:00:00.000Z',
      revision: 2,
    });
    expect(authorizationKeyRotatedSchema.parse(decision.event).data).toEqual({
      clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
      organizationId: 'acme',
      keyDigest: NEW,
      previousKeyDigest: 'a'.repeat(64),
      previousKeyExpiresAt: '2026-11-25T13:00:00.000Z',
      rotatedAt: at,
      revision: 2,
    });
  });

  test("when the overlap would outlast the authorization, then it ends at the authorization's expiry", () => {
    const decision = decideRotate(
      anAuthorization({ expiresAt: '2026-11-26T00:00:00.000Z' }),
      { newKeyDigest: NEW, overlapSeconds: 604_800 },
      stamp(at),
    );

    expect(decision.record.previousKeyExpiresAt).toBe('2026-11-26T00:00:00.000Z');
  });

  test('when the overlap is 0, then the previous key ends at once: no previous digest is kept', () => {
    const decision = decideRotate(anAuthorization(), { newKeyDigest: NEW, overlapSeconds: 0 }, stamp(at));

    expect(decision.record).toMatchObject({ keyDigest: NEW, previousKeyDigest: null, previousKeyExpiresAt: null });
  });

  test('when it is rotated again during an overlap, then the oldest key is dropped: at most two keys are valid', () => {
    const first = decideRotate(anAuthorization({ expiresAt: null }), { newKeyDigest: NEW, overlapSeconds: 3600 }, stamp(at));
    const second = decideRotate(first.record, { newKeyDigest: 'c'.repeat(64), overlapSeconds: 3600 }, stamp('2026-11-25T12:10:00.000Z'));

    expect(second.record).toMatchObject({ keyDigest: 'c'.repeat(64), previousKeyDigest: NEW, revision: 3 });
    expect(JSON.stringify(second.record)).not.toContain('a'.repeat(64));
  });

  test.each([
    ['revoked', anAuthorization({ revokedAt: '2026-11-21T00:00:00.000Z', revision: 2 })],
    ['marked expired', anAuthorization({ expiredAt: '2026-12-01T00:00:01.000Z', revision: 2 })],
    ['past its expiry but not yet marked', anAuthorization({ expiresAt: '2026-11-25T12:00:00.000Z' })],
  ])('when a %s authorization is rotated, then it is refused as inactive and nothing changes', (_name, record) => {
    expect(decideRotate(record, { newKeyDigest: NEW, overlapSeconds: 60 }, stamp(at))).toEqual({ outcome: 'inactive', record });
  });
});

describe('claim links (decision 38)', () => {
  const KEY = 'c'.repeat(64);
  const at = '2026-11-25T12:00:00.000Z';
  const unclaimed = (overrides: Partial<StoredAuthorization> = {}) =>
    anAuthorization({ keyDigest: null, claimTokenDigest: 'd'.repeat(64), claimExpiresAt: '2026-11-26T00:00:00.000Z', ...overrides });

  test('when an open link is claimed, then the key digest is set, the claim recorded, and the event carries the digest only', () => {
    const decision = decideClaim(unclaimed(), { newKeyDigest: KEY, clientAddress: '203.0.113.9' }, stamp(at));

    expect(decision.outcome).toBe('changed');
    if (decision.outcome !== 'changed') return;
    expect(decision.record).toMatchObject({ keyDigest: KEY, claimedAt: at, claimedFromAddress: '203.0.113.9', revision: 2 });
    expect(decision.record.claimTokenDigest).toBe('d'.repeat(64));
    expect(authorizationKeyClaimedSchema.parse(decision.event).data).toEqual({
      clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
      organizationId: 'acme',
      keyDigest: KEY,
      claimedAt: at,
      revision: 2,
    });
    expect(JSON.stringify(decision.event)).not.toContain('203.0.113.9');
  });

  test.each([
    ['claimed already', unclaimed({ keyDigest: 'e'.repeat(64), claimedAt: '2026-11-24T00:00:00.000Z' }), at, 'used'],
    ['past its link expiry', unclaimed(), '2026-11-26T00:00:00.000Z', 'expired'],
    ['revoked', unclaimed({ revokedAt: '2026-11-21T00:00:00.000Z' }), at, 'expired'],
    ['past the authorization expiry', unclaimed({ expiresAt: '2026-11-25T00:00:00.000Z' }), at, 'expired'],
  ])('when a link %s is claimed, then it is refused and nothing changes', (_name, record, time, outcome) => {
    expect(claimLinkStateOf(record, new Date(time))).toBe(outcome);
    expect(decideClaim(record, { newKeyDigest: KEY, clientAddress: null }, stamp(time))).toEqual({ outcome, record });
  });

  test("when a new link is issued, then its digest replaces the old one and it ends at its validity, never past the authorization's expiry", () => {
    const decision = decideNewClaimLink(unclaimed({ expiresAt: null }), { tokenDigest: 'f'.repeat(64), validSeconds: 3600 }, new Date(at));
    const capped = decideNewClaimLink(
      unclaimed({ expiresAt: '2026-11-25T12:30:00.000Z' }),
      { tokenDigest: 'f'.repeat(64), validSeconds: 3600 },
      new Date(at),
    );

    expect(decision).toEqual({
      outcome: 'changed',
      record: expect.objectContaining({ claimTokenDigest: 'f'.repeat(64), claimExpiresAt: '2026-11-25T13:00:00.000Z', revision: 2 }),
    });
    expect(capped.record.claimExpiresAt).toBe('2026-11-25T12:30:00.000Z');
  });

  test.each([
    ['claimed', unclaimed({ keyDigest: 'e'.repeat(64) }), 'claimed'],
    ['delivered in the response', anAuthorization(), 'claimed'],
    ['revoked', unclaimed({ revokedAt: '2026-11-21T00:00:00.000Z' }), 'inactive'],
  ])('when a new link is asked for an authorization %s, then it is refused', (_name, record, outcome) => {
    expect(decideNewClaimLink(record, { tokenDigest: 'f'.repeat(64), validSeconds: 3600 }, new Date(at)).outcome).toBe(outcome);
  });

  test('when an unclaimed authorization is rotated, then it is refused: the organization never gets a key it was not to see', () => {
    expect(decideRotate(unclaimed(), { newKeyDigest: KEY, overlapSeconds: 0 }, stamp(at)).outcome).toBe('unclaimed');
  });
});
