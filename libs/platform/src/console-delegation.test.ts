import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { checkBearer, createTokenVerifier } from './caller-auth';
import {
  CONSOLE_AUDIENCES,
  CONSOLE_ISSUER,
  CONSOLE_SIGNING_KEY,
  consoleClientAddressVerifier,
  consoleKeysOf,
  consoleSigner,
  consoleSigningKeyOf,
  PERSON_ISSUER_CLAIM,
  withConsoleTokens,
} from './console-delegation';
import { signDevToken } from './dev-tokens';

const CALLER_SECRET = 'callers-development-secret-of-at-least-32-chars';
const consoleKey = consoleSigningKeyOf(CONSOLE_SIGNING_KEY.generate());
const signer = consoleSigner(consoleKey);
const callers = createTokenVerifier({ JWT_HS256_SECRET: CALLER_SECRET, JWT_ISSUER: undefined, JWT_AUDIENCE: undefined });
const bearer = (token: string) => `Bearer ${token}`;
const requirement = { scope: 'authorizations:write' };
const PERSON = { organizationId: 'org-a', subject: 'admin@org-a', personIssuer: 'https://idp.example', scope: 'authorizations:write' };

async function verifierFor(audience = CONSOLE_AUDIENCES.notifier) {
  return withConsoleTokens(callers, consoleKeysOf(await signer.jwks()), audience);
}

/** A console-shaped token with some of its parts changed. */
async function consoleLike(
  change: { key?: KeyObject; audience?: string; issuedSecondsAgo?: number; lifetime?: string | number; org?: unknown } = {},
) {
  const issuedAt = Math.floor(Date.now() / 1000) - (change.issuedSecondsAgo ?? 0);
  const { kid } = (await signer.jwks()).keys[0]!;
  return new SignJWT({
    org: 'org-a',
    scope: 'authorizations:write',
    [PERSON_ISSUER_CLAIM]: 'https://idp.example',
    ...('org' in change ? { org: change.org } : {}),
  })
    .setProtectedHeader({ alg: 'EdDSA', kid: kid! })
    .setIssuer(CONSOLE_ISSUER)
    .setAudience(change.audience ?? CONSOLE_AUDIENCES.notifier)
    .setSubject('admin')
    .setIssuedAt(issuedAt)
    .setExpirationTime(change.lifetime ?? issuedAt + 60)
    .sign(change.key ?? consoleKey);
}

describe("the console's tokens for the APIs (decision 51)", () => {
  test('a token the console signs names the person, their issuer, their organization and their scope, via the console', async () => {
    const token = await signer.sign(CONSOLE_AUDIENCES.notifier, PERSON);
    const claims = await checkBearer(await verifierFor(), bearer(token), requirement, 'org-a');
    expect(claims).toEqual({
      subject: 'admin@org-a',
      organization: 'org-a',
      scopes: new Set(['authorizations:write']),
      issuer: 'https://idp.example',
      via: 'console',
    });
  });

  test('it administers no other organization', async () => {
    const token = await signer.sign(CONSOLE_AUDIENCES.notifier, PERSON);
    await expect(checkBearer(await verifierFor(), bearer(token), requirement, 'org-b')).rejects.toMatchObject({
      code: 'FORBIDDEN_ORGANIZATION',
    });
  });

  test.each([
    ['signed with another key (forged)', { key: generateKeyPairSync('ed25519').privateKey }],
    ['for another audience', { audience: CONSOLE_AUDIENCES.credentials }],
    ['older than a minute, whatever its expiry says', { issuedSecondsAgo: 120, lifetime: '1h' }],
    ['that says it lives longer than a minute', { lifetime: '5m' }],
    ['expired', { issuedSecondsAgo: 61 }],
    ['with an org claim that is not a string', { org: ['org-a'] }],
  ])('a console token %s is refused (401)', async (_name, change) => {
    await expect(checkBearer(await verifierFor(), bearer(await consoleLike(change)), requirement, 'org-a')).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
  });

  test('the unchanged token is accepted: the refusals above were each the one change', async () => {
    await expect(checkBearer(await verifierFor(), bearer(await consoleLike()), requirement, 'org-a')).resolves.toMatchObject({
      via: 'console',
    });
  });

  test("a console token is never checked against the callers' keys, nor a caller's against the console's", async () => {
    const verify = await verifierFor();
    // Signed with the callers' secret but naming the console as its issuer: refused, not passed on to the callers' verifier.
    const forged = await new SignJWT({ org: 'org-a', scope: 'authorizations:write', [PERSON_ISSUER_CLAIM]: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(CONSOLE_ISSUER)
      .setAudience(CONSOLE_AUDIENCES.notifier)
      .setSubject('admin')
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(new TextEncoder().encode(CALLER_SECRET));
    await expect(checkBearer(verify, bearer(forged), requirement, 'org-a')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    // A caller's token goes to the callers' verifier as before, its issuer named.
    const caller = await signDevToken(CALLER_SECRET, { org: 'org-a', scope: 'authorizations:write' });
    const claims = await checkBearer(verify, bearer(caller), requirement, 'org-a');
    expect(claims.organization).toBe('org-a');
    expect(claims.via).toBeUndefined();
    // And where callers' tokens are checked alone, a console token is refused.
    const token = await signer.sign(CONSOLE_AUDIENCES.notifier, PERSON);
    await expect(checkBearer(callers, bearer(token), requirement, 'org-a')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  test('without the console key the verifier is the callers’ alone', async () => {
    const token = await signer.sign(CONSOLE_AUDIENCES.notifier, PERSON);
    const verify = withConsoleTokens(callers, undefined, CONSOLE_AUDIENCES.notifier);
    await expect(checkBearer(verify, bearer(token), requirement, 'org-a')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  test("the claim page's address is taken only from the console's own token", async () => {
    const source = consoleKeysOf(await signer.jwks());
    const addressOf = consoleClientAddressVerifier(source);
    expect(await addressOf(await signer.signClientAddress('203.0.113.9'))).toBe('203.0.113.9');
    const other = consoleSigner(consoleSigningKeyOf(CONSOLE_SIGNING_KEY.generate()));
    expect(await addressOf(await other.signClientAddress('203.0.113.9'))).toBeUndefined();
    expect(await addressOf('not-a-token')).toBeUndefined();
  });

  test('a signing key that is not Ed25519 is refused', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'der', type: 'pkcs8' });
    expect(() => consoleSigningKeyOf(rsa.toString('base64url'))).toThrow('Ed25519');
  });
});
