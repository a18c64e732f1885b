import { SignJWT } from 'jose';
import { z } from 'zod';
import { checkBearer, createTokenVerifier } from './caller-auth';
import { CONSOLE_AUDIENCE, CONSOLE_ISSUER, refuseSharedConsoleSecret, signConsoleToken, withConsoleTokens } from './console-delegation';
import { signDevToken } from './dev-tokens';

const CONSOLE_SECRET = 'the-console-and-the-notifier-share-this-secret';
const CALLER_SECRET = 'callers-development-secret-of-at-least-32-chars';
const callers = createTokenVerifier({ JWT_HS256_SECRET: CALLER_SECRET, JWT_ISSUER: undefined, JWT_AUDIENCE: undefined });
const verify = withConsoleTokens(callers, CONSOLE_SECRET);
const bearer = (token: string) => `Bearer ${token}`;
const requirement = { scope: 'authorizations:write' };

/** A console-shaped token with some of its parts changed. */
async function consoleLike(
  change: { secret?: string; audience?: string; issuedSecondsAgo?: number; lifetime?: string; org?: unknown } = {},
) {
  const issuedAt = Math.floor(Date.now() / 1000) - (change.issuedSecondsAgo ?? 0);
  return new SignJWT({ org: 'org-a', scope: 'authorizations:write', ...('org' in change ? { org: change.org } : {}) })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(CONSOLE_ISSUER)
    .setAudience(change.audience ?? CONSOLE_AUDIENCE)
    .setSubject('admin')
    .setIssuedAt(issuedAt)
    .setExpirationTime(change.lifetime ?? issuedAt + 60)
    .sign(new TextEncoder().encode(change.secret ?? CONSOLE_SECRET));
}

describe("the console's tokens for the notifier", () => {
  test('a token the console signs administers the signed-in organization, with authorizations:write, for a minute', async () => {
    const token = await signConsoleToken(CONSOLE_SECRET, { organizationId: 'org-a', subject: 'admin@org-a' });
    const claims = await checkBearer(verify, bearer(token), requirement, 'org-a');
    expect(claims).toEqual({ subject: 'admin@org-a', organization: 'org-a', scopes: new Set(['authorizations:write']) });
  });

  test('it administers no other organization', async () => {
    const token = await signConsoleToken(CONSOLE_SECRET, { organizationId: 'org-a', subject: 'admin@org-a' });
    await expect(checkBearer(verify, bearer(token), requirement, 'org-b')).rejects.toMatchObject({ code: 'FORBIDDEN_ORGANIZATION' });
  });

  test.each([
    ['signed with another secret', { secret: 'a-different-secret-of-at-least-32-characters' }],
    ['for another audience', { audience: 'rsd-credentials' }],
    ['older than a minute, whatever its expiry says', { issuedSecondsAgo: 120, lifetime: '1h' }],
    ['expired', { issuedSecondsAgo: 61 }],
    ['with an org claim that is not a string', { org: ['org-a'] }],
  ])('a console token %s is refused (401)', async (_name, change) => {
    await expect(checkBearer(verify, bearer(await consoleLike(change)), requirement, 'org-a')).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
  });

  test("a console token is never checked against the callers' keys, nor a caller's against the console's", async () => {
    // Signed with the callers' secret but naming the console as its issuer: refused, not passed on to the callers' verifier.
    const forged = await consoleLike({ secret: CALLER_SECRET });
    await expect(checkBearer(verify, bearer(forged), requirement, 'org-a')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    // A caller's token goes to the callers' verifier as before.
    const caller = await signDevToken(CALLER_SECRET, { org: 'org-a', scope: 'authorizations:write' });
    await expect(checkBearer(verify, bearer(caller), requirement, 'org-a')).resolves.toMatchObject({ organization: 'org-a' });
    // And where callers' tokens are checked alone (the credentials service's API), a console token is refused.
    const token = await signConsoleToken(CONSOLE_SECRET, { organizationId: 'org-a', subject: 'admin' });
    await expect(checkBearer(callers, bearer(token), requirement, 'org-a')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  test('without a console secret the verifier is the callers’ alone', async () => {
    const token = await signConsoleToken(CONSOLE_SECRET, { organizationId: 'org-a', subject: 'admin' });
    await expect(checkBearer(withConsoleTokens(callers, undefined), bearer(token), requirement, 'org-a')).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
  });

  test("a configuration whose console secret is the callers' development secret is refused", () => {
    const schema = z
      .object({ JWT_HS256_SECRET: z.string().optional(), CONSOLE_NOTIFIER_SECRET: z.string().optional() })
      .superRefine(refuseSharedConsoleSecret);
    expect(schema.safeParse({ JWT_HS256_SECRET: CALLER_SECRET, CONSOLE_NOTIFIER_SECRET: CALLER_SECRET }).error?.issues).toEqual([
      expect.objectContaining({ path: ['CONSOLE_NOTIFIER_SECRET'], message: 'must differ from JWT_HS256_SECRET' }),
    ]);
    expect(schema.safeParse({ JWT_HS256_SECRET: CALLER_SECRET, CONSOLE_NOTIFIER_SECRET: CONSOLE_SECRET }).success).toBe(true);
    expect(schema.safeParse({}).success).toBe(true);
  });
});
