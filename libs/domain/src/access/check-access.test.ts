import { clientIdPattern } from '@rsd/contracts';
import { digestApiKey, generateApiKey, generateClientId } from '../credential-formats';
import type { RecipientAccountView } from '../views/account-views';
import type { CredentialView } from '../views/credential-view';
import { accountKeyMatch, checkAccess, checkAccountAccess, identifyCaller, type IdentifiedCaller } from './check-access';

const rules = { clientIdPattern: clientIdPattern('rs') };
const now = new Date('2026-11-21T08:00:00.000Z');
const apiKey = generateApiKey('rsk');
const clientId = generateClientId('rs');
const credential: CredentialView = {
  clientId,
  organizationId: 'acme',
  keyDigest: digestApiKey(apiKey),
  scopes: ['qr_score'],
  status: 'active',
  expiresAt: '2026-12-01T00:00:00.000Z',
  revision: 1,
};
const caller: IdentifiedCaller = { clientId, apiKey };

describe('identifyCaller (steps 2 to 4)', () => {
  test.each([
    ['no Client ID segment', undefined, apiKey, 'MISSING_CLIENT_ID'],
    ['a blank Client ID', '  ', apiKey, 'MISSING_CLIENT_ID'],
    ['a segment that does not decode', null, apiKey, 'INVALID_CLIENT_ID'],
    ['the wrong prefix', 'xx_0123456789abcdef', apiKey, 'INVALID_CLIENT_ID'],
    ['a Client ID with a trailing space', `${clientId} `, apiKey, 'INVALID_CLIENT_ID'],
    ['no key', clientId, '', 'MISSING_API_KEY'],
    // First failure wins: a bad Client ID is reported even when the key is missing too.
    ['a bad Client ID and no key', 'nope', '', 'INVALID_CLIENT_ID'],
  ])('when the request has %s, then it is refused with %s', (_case, id, key, code) => {
    expect(identifyCaller({ clientId: id, apiKey: key }, rules)).toEqual({ outcome: 'refused', code });
  });

  test('when the Client ID is well formed and a key is present, then the caller is identified as given', () => {
    expect(identifyCaller({ clientId, apiKey: 'anything' }, rules)).toEqual({
      outcome: 'identified',
      caller: { clientId, apiKey: 'anything' },
    });
  });
});

describe('checkAccess (steps 5 to 7 and 9)', () => {
  test('when no credential was found, then CREDENTIAL_NOT_FOUND comes before any key check', () => {
    expect(checkAccess({ clientId, apiKey: 'not-a-key' }, undefined, 'qr_score', now)).toEqual({
      outcome: 'refused',
      code: 'CREDENTIAL_NOT_FOUND',
    });
  });

  test('when the key fails its checksum or its digest, then INVALID_API_KEY, even for a revoked credential', () => {
    const otherKey = generateApiKey('rsk');
    const revoked = { ...credential, status: 'revoked' as const };

    // One character changed, whatever the random key ends with (a fixed 'x' left it unchanged one time in 62).
    const mistyped = `${apiKey.slice(0, -1)}${apiKey.endsWith('x') ? 'y' : 'x'}`;
    expect(checkAccess({ clientId, apiKey: mistyped }, credential, 'qr_score', now)).toMatchObject({
      code: 'INVALID_API_KEY',
    });
    expect(checkAccess({ clientId, apiKey: otherKey }, credential, 'qr_score', now)).toMatchObject({ code: 'INVALID_API_KEY' });
    expect(checkAccess({ clientId, apiKey: otherKey }, revoked, 'qr_score', now)).toMatchObject({ code: 'INVALID_API_KEY' });
  });

  test('when the credential is revoked, expired by event, or past its expiresAt, then CREDENTIAL_INACTIVE before the scope', () => {
    for (const view of [
      { ...credential, status: 'revoked' as const },
      { ...credential, status: 'expired' as const },
      { ...credential, expiresAt: now.toISOString() },
    ]) {
      expect(checkAccess(caller, view, 'pillar_breakdown', now)).toEqual({ outcome: 'refused', code: 'CREDENTIAL_INACTIVE' });
    }
  });

  test('when an active credential lacks the scope, then it is forbidden, with the credential for the rate limit', () => {
    expect(checkAccess(caller, credential, 'pillar_breakdown', now)).toEqual({
      outcome: 'forbidden',
      code: 'INSUFFICIENT_SCOPE',
      credential,
    });
  });

  test('when everything verifies, then access is granted with the credential, by its current key', () => {
    expect(checkAccess(caller, credential, 'qr_score', now)).toEqual({ outcome: 'granted', credential, key: 'current' });
  });

  describe('during a key rotation (decision 19)', () => {
    const newKey = generateApiKey('rsk');
    const rotated: CredentialView = {
      ...credential,
      keyDigest: digestApiKey(newKey),
      previousKeyDigest: digestApiKey(apiKey),
      previousKeyExpiresAt: '2026-11-21T09:00:00.000Z',
      revision: 2,
    };

    test('when either key is presented before the overlap ends, then both are granted, each named for which key it is', () => {
      expect(checkAccess({ clientId, apiKey: newKey }, rotated, 'qr_score', now)).toMatchObject({ outcome: 'granted', key: 'current' });
      expect(checkAccess(caller, rotated, 'qr_score', new Date('2026-11-21T08:59:59.999Z'))).toMatchObject({
        outcome: 'granted',
        key: 'previous',
      });
    });

    test('when the previous key is presented at or after the end of the overlap, then INVALID_API_KEY; the new key goes on', () => {
      const ended = new Date('2026-11-21T09:00:00.000Z');

      expect(checkAccess(caller, rotated, 'qr_score', ended)).toEqual({ outcome: 'refused', code: 'INVALID_API_KEY' });
      expect(checkAccess({ clientId, apiKey: newKey }, rotated, 'qr_score', ended)).toMatchObject({ outcome: 'granted' });
    });

    test('when the rotation had no overlap, then the previous key is refused at once', () => {
      const noOverlap = { ...rotated, previousKeyDigest: null, previousKeyExpiresAt: null };

      expect(checkAccess(caller, noOverlap, 'qr_score', now)).toEqual({ outcome: 'refused', code: 'INVALID_API_KEY' });
    });
  });
});

describe('checkAccess before a key delivered by claim link is claimed (decision 38)', () => {
  test('when the credential has no key yet, then every well-formed key is refused as INVALID_API_KEY', () => {
    const unclaimed: CredentialView = { ...credential, keyDigest: null };

    expect(checkAccess(caller, unclaimed, 'qr_score', now)).toEqual({ outcome: 'refused', code: 'INVALID_API_KEY' });
    expect(checkAccess({ clientId, apiKey: generateApiKey('rsk') }, unclaimed, undefined, now)).toEqual({
      outcome: 'refused',
      code: 'INVALID_API_KEY',
    });
  });
});

describe('which key an account key is (decisions 42 and 50)', () => {
  const previousKey = generateApiKey('rsa');
  const currentKey = generateApiKey('rsa');
  const account: RecipientAccountView = {
    accountId: 'rcp_0123456789abcdef',
    name: null,
    keyDigest: digestApiKey(currentKey),
    previousKeyDigest: digestApiKey(previousKey),
    previousKeyExpiresAt: '2026-11-21T09:00:00.000Z',
    revision: 2,
  };
  const held: CredentialView = { ...credential, keyDigest: null, recipientAccountId: account.accountId };

  test('when the current and the previous key are presented within the overlap, then each is told apart', () => {
    expect(accountKeyMatch(currentKey, account, now)).toBe('current');
    expect(accountKeyMatch(previousKey, account, now)).toBe('previous');
    expect(checkAccountAccess({ clientId, apiKey: currentKey }, held, account, 'qr_score', now)).toMatchObject({ key: 'current' });
    expect(checkAccountAccess({ clientId, apiKey: previousKey }, held, account, 'qr_score', now)).toMatchObject({ key: 'previous' });
  });

  test('when the overlap has ended or the key is another, then it is neither', () => {
    const ended = new Date('2026-11-21T09:00:00.000Z');

    expect(accountKeyMatch(previousKey, account, ended)).toBeUndefined();
    expect(accountKeyMatch(generateApiKey('rsa'), account, now)).toBeUndefined();
    expect(checkAccountAccess({ clientId, apiKey: previousKey }, held, account, 'qr_score', ended)).toEqual({
      outcome: 'refused',
      code: 'INVALID_API_KEY',
    });
  });
});
