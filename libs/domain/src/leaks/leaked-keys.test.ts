import {
  ACCOUNT_KEY_PREFIX,
  authorizationPreviousKeyRevokedSchema,
  authorizationRevokedSchema,
  EVENT_TYPES,
  recipientAccountKeyRevokedSchema,
} from '@rsd/contracts';
import { anAuthorizationRecord } from '@rsd/testkit';
import type { StoredRecipientAccount } from '../accounts/recipient-account';
import type { StoredAuthorization } from '../authorizations/authorization-record';
import { digestApiKey, generateApiKey, generateClientId } from '../credential-formats';
import { recipientAccountView } from '../views/account-views';
import { credentialView, type CredentialView } from '../views/credential-view';
import { decideLeakedAccountKey, decideLeakedGrantKey, decideLeakedGrantKeyWithAlert, keyPatternOf, leakedKeyKindOf } from './leaked-keys';

const NOW = new Date('2026-11-25T12:00:00.000Z');
const stamp = { id: 'event-1', time: NOW };
const CURRENT = 'c'.repeat(64);
const PREVIOUS = 'b'.repeat(64);
const OTHER = 'd'.repeat(64);

const aGrant = (overrides: Partial<StoredAuthorization> = {}): StoredAuthorization =>
  anAuthorizationRecord({
    keyDigest: CURRENT,
    previousKeyDigest: PREVIOUS,
    previousKeyExpiresAt: '2026-11-26T00:00:00.000Z',
    revision: 2,
    ...overrides,
  });

function anAccount(overrides: Partial<StoredRecipientAccount> = {}): StoredRecipientAccount {
  return {
    accountId: 'rcp_AAAAAAAAAAAAAAAAAAAAAAAA',
    name: 'Book',
    keyDigest: CURRENT,
    previousKeyDigest: PREVIOUS,
    previousKeyExpiresAt: '2026-11-26T00:00:00.000Z',
    createdAt: '2026-11-20T10:00:00.000Z',
    revision: 2,
    ...overrides,
  };
}

describe('a leak report of an authorization key', () => {
  test('when it names the current key of an active grant, then the grant is revoked as key_leaked and the label is true_positive', () => {
    const decision = decideLeakedGrantKey(aGrant(), CURRENT, stamp);

    expect(decision).toMatchObject({ outcome: 'changed', label: 'true_positive', record: { revocationReason: 'key_leaked', revision: 3 } });
    if (decision.outcome !== 'changed') return;
    expect(authorizationRevokedSchema.parse(decision.event).data).toMatchObject({ revocationReason: 'key_leaked', revision: 3 });
  });

  test('when it names the previous key in its overlap, then that key alone ends: the grant stays active on its current key', () => {
    const decision = decideLeakedGrantKey(aGrant(), PREVIOUS, stamp);

    expect(decision).toMatchObject({
      outcome: 'changed',
      label: 'true_positive',
      record: {
        keyDigest: CURRENT,
        previousKeyDigest: null,
        previousKeyExpiresAt: null,
        leakedKeyDigest: PREVIOUS,
        revokedAt: null,
        revision: 3,
      },
    });
    if (decision.outcome !== 'changed') return;
    expect(authorizationPreviousKeyRevokedSchema.parse(decision.event).data).toEqual({
      clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
      organizationId: 'acme',
      previousKeyDigest: PREVIOUS,
      revokedAt: NOW.toISOString(),
      revision: 3,
    });
  });

  test('when the same report comes again, then nothing changes and the label is still true_positive', () => {
    const afterCurrent = decideLeakedGrantKey(aGrant(), CURRENT, stamp);
    const afterPrevious = decideLeakedGrantKey(aGrant(), PREVIOUS, stamp);
    if (afterCurrent.outcome !== 'changed' || afterPrevious.outcome !== 'changed') throw new Error('expected changes');

    expect(decideLeakedGrantKey(afterCurrent.record, CURRENT, stamp)).toEqual({ outcome: 'unchanged', label: 'true_positive' });
    expect(decideLeakedGrantKey(afterPrevious.record, PREVIOUS, stamp)).toEqual({ outcome: 'unchanged', label: 'true_positive' });
  });

  test.each([
    ['revoked by its organization', aGrant({ revokedAt: '2026-11-24T00:00:00.000Z', revocationReason: 'organization' }), CURRENT],
    ['expired', aGrant({ expiresAt: '2026-11-25T00:00:00.000Z' }), CURRENT],
    ['a previous key past its overlap', aGrant({ previousKeyExpiresAt: '2026-11-25T11:59:59.999Z' }), PREVIOUS],
    ['a previous key of a revoked grant', aGrant({ revokedAt: '2026-11-24T00:00:00.000Z' }), PREVIOUS],
    ['a digest the grant does not have', aGrant(), OTHER],
  ])('when it names a key that worked no more (%s), then nothing changes and the label is false_positive', (_name, record, digest) => {
    expect(decideLeakedGrantKey(record, digest, stamp)).toEqual({ outcome: 'unchanged', label: 'false_positive' });
  });
});

describe('a leak report of an account key', () => {
  test('when it names the current key, then the account has no key left and owes a KeyRevoked event; the same report again changes nothing', () => {
    const decision = decideLeakedAccountKey(anAccount(), CURRENT, stamp);

    expect(decision).toMatchObject({
      outcome: 'changed',
      label: 'true_positive',
      record: { keyDigest: null, previousKeyDigest: PREVIOUS, leakedKeyDigest: CURRENT, revision: 3 },
    });
    if (decision.outcome !== 'changed') return;
    expect(recipientAccountKeyRevokedSchema.parse(decision.event).data).toEqual({
      accountId: 'rcp_AAAAAAAAAAAAAAAAAAAAAAAA',
      keyDigest: CURRENT,
      revokedAt: NOW.toISOString(),
      revision: 3,
    });
    expect(decideLeakedAccountKey(decision.record, CURRENT, stamp)).toEqual({ outcome: 'unchanged', label: 'true_positive' });
  });

  test('when it names the previous key in its overlap, then that key alone ends', () => {
    expect(decideLeakedAccountKey(anAccount(), PREVIOUS, stamp)).toMatchObject({
      outcome: 'changed',
      label: 'true_positive',
      record: { keyDigest: CURRENT, previousKeyDigest: null, previousKeyExpiresAt: null, leakedKeyDigest: PREVIOUS },
    });
  });

  test('when it names a previous key past its overlap or another digest, then the label is false_positive', () => {
    const pastOverlap = anAccount({ previousKeyExpiresAt: '2026-11-25T00:00:00.000Z' });
    expect(decideLeakedAccountKey(pastOverlap, PREVIOUS, stamp)).toEqual({ outcome: 'unchanged', label: 'false_positive' });
    expect(decideLeakedAccountKey(anAccount(), OTHER, stamp)).toEqual({ outcome: 'unchanged', label: 'false_positive' });
  });
});

describe('the views after a leak report', () => {
  const view: CredentialView = {
    clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
    organizationId: 'acme',
    keyDigest: CURRENT,
    previousKeyDigest: PREVIOUS,
    previousKeyExpiresAt: '2026-11-26T00:00:00.000Z',
    scopes: ['qr_score'],
    status: 'active',
    expiresAt: null,
    revision: 2,
  };

  test('when the previous key is revoked, then the credential view keeps its current key alone, once', () => {
    const decision = decideLeakedGrantKey(aGrant(), PREVIOUS, stamp);
    if (decision.outcome !== 'changed') throw new Error('expected a change');

    const after = credentialView.evolve(view, decision.event);

    expect(after).toEqual({ ...view, previousKeyDigest: null, previousKeyExpiresAt: null, revision: 3 });
    expect(credentialView.evolve(after, decision.event)).toBe(after);
  });

  test('when an account key is revoked, then the account view drops that key only', () => {
    const state = {
      accountId: 'rcp_AAAAAAAAAAAAAAAAAAAAAAAA',
      name: 'Book',
      keyDigest: CURRENT,
      previousKeyDigest: PREVIOUS,
      previousKeyExpiresAt: '2026-11-26T00:00:00.000Z',
      revision: 2,
    };
    const current = decideLeakedAccountKey(anAccount(), CURRENT, stamp);
    const previous = decideLeakedAccountKey(anAccount(), PREVIOUS, stamp);
    if (current.outcome !== 'changed' || previous.outcome !== 'changed') throw new Error('expected changes');

    expect(current.event.type).toBe(EVENT_TYPES.recipientAccountKeyRevoked);
    expect(recipientAccountView.evolve(state, current.event)).toEqual({ ...state, keyDigest: null, revision: 3 });
    expect(recipientAccountView.evolve(state, previous.event)).toEqual({
      ...state,
      previousKeyDigest: null,
      previousKeyExpiresAt: null,
      revision: 3,
    });
  });
});

describe('the regular expression registered with a secret-scanning provider', () => {
  const patternOf = (prefix: string) => new RegExp(keyPatternOf(prefix));

  test.each(['rsk', ACCOUNT_KEY_PREFIX])('when keys with the prefix %s are generated, then every one matches it whole', (prefix) => {
    for (let i = 0; i < 200; i += 1) {
      const key = generateApiKey(prefix);
      expect(new RegExp(`^${keyPatternOf(prefix)}$`).test(key)).toBe(true);
      expect(patternOf(prefix).exec(`export KEY="${key}"`)?.[0]).toBe(key);
    }
  });

  test('when a string is not such a key, then it does not match', () => {
    const key = generateApiKey('rsk');
    const others = [
      key.slice(0, -1),
      `${key}A`,
      `x${key}`,
      key.replace('rsk_', 'rsa_'),
      key.replace('rsk_', 'rsk-'),
      `${key.slice(0, 10)}-${key.slice(11)}`,
      generateClientId('rs'),
      digestApiKey(key),
      generateApiKey('ghp'),
    ];
    for (const other of others) expect(patternOf('rsk').test(other)).toBe(false);
  });
});

describe('what the organization hears of a leak (decision 44)', () => {
  const ids = () => {
    let n = 0;
    return () => `alert-event-${(n += 1)}`;
  };

  test('when a previous key ends alone, then a key_leaked alert of the grant is written with its event; a revoked grant is heard of by its reason alone', () => {
    const previous = decideLeakedGrantKeyWithAlert(aGrant(), PREVIOUS, stamp, ids());
    expect(previous).toMatchObject({ outcome: 'changed', label: 'true_positive' });
    if (previous.outcome !== 'changed') return;
    expect(previous.events.map((event) => event.type)).toEqual([
      EVENT_TYPES.authorizationPreviousKeyRevoked,
      EVENT_TYPES.authorizationAlerted,
    ]);
    expect(previous.events[1]?.data).toMatchObject({ alert: 'authorization.key_leaked', at: NOW.toISOString() });
    expect(previous.record.alerts?.[0]).toMatchObject({ type: 'authorization.key_leaked' });

    const current = decideLeakedGrantKeyWithAlert(aGrant(), CURRENT, stamp, ids());
    expect(current.outcome === 'changed' && current.events.map((event) => event.type)).toEqual([EVENT_TYPES.authorizationRevoked]);
    expect(decideLeakedGrantKeyWithAlert(aGrant(), OTHER, stamp, ids())).toEqual({ outcome: 'unchanged', label: 'false_positive' });
  });

  test("when a token is reported, then its kind is told by its prefix and checksum alone: a grant's, an account's, or none", () => {
    expect(leakedKeyKindOf(generateApiKey('rsk'), 'rsk')).toBe('grant');
    expect(leakedKeyKindOf(generateApiKey(ACCOUNT_KEY_PREFIX), 'rsk')).toBe('account');
    const typo = generateApiKey('rsk').replace(/.$/, (last) => (last === 'a' ? 'b' : 'a'));
    expect(leakedKeyKindOf(typo, 'rsk')).toBeUndefined();
  });
});
