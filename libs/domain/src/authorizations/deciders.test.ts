import { authorizationExpiredSchema, authorizationRevokedSchema } from '@rsd/contracts';
import type { StoredAuthorization } from './authorization-record';
import { decideExpire, decideRevoke, toAuthorization } from './deciders';

const CREATED = new Date('2026-11-20T10:00:00.000Z');

function anAuthorization(overrides: Partial<StoredAuthorization> = {}): StoredAuthorization {
  return {
    clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
    organizationId: 'acme',
    recipientType: 'auditor',
    recipientName: null,
    scopes: ['qr_score'],
    keyDigest: 'a'.repeat(64),
    expiresAt: '2026-12-01T00:00:00.000Z',
    createdAt: CREATED.toISOString(),
    revokedAt: null,
    expiredAt: null,
    revision: 1,
    ...overrides,
  };
}

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

  test('when a record becomes a resource, then the digest and bookkeeping stay inside and the status is computed', () => {
    const resource = toAuthorization(anAuthorization(), new Date('2026-12-01T00:00:00.000Z'));

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
    });
  });
});
