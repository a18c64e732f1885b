import { DEFAULT_CLAIMS } from './console-config';
import { identityOf, MANAGE_PERMISSION } from './console-identity';
import type { SignedInClaims } from './oidc-sign-in';

const granted = (overrides: Record<string, unknown> = {}): SignedInClaims => ({
  sub: 'idp|1234',
  iss: 'https://idp.example',
  org: 'acme',
  permissions: ['authorizations:read', MANAGE_PERMISSION],
  ...overrides,
});

describe('console identity: claims mapped to decision 15', () => {
  test('when the claims name a valid organization and grant authorizations:write, then the person is signed in for it', () => {
    expect(identityOf(granted({ name: 'Ada Admin' }), DEFAULT_CLAIMS)).toEqual({
      outcome: 'signed-in',
      // Decision 51: the person's own issuer, and the permissions that are the APIs' scopes, for the console's tokens.
      identity: {
        organizationId: 'acme',
        subject: 'idp|1234',
        issuer: 'https://idp.example',
        scope: 'authorizations:read authorizations:write',
        displayName: 'Ada Admin',
      },
    });
  });

  test.each([
    ['missing', undefined],
    ['empty', ''],
    ['with a space', 'acme corp'],
    ['with a slash', 'acme/other'],
    ['of 65 characters', 'a'.repeat(65)],
    ['a number', 42],
    ['an array', ['acme']],
    ['an object', { id: 'acme' }],
    ['null', null],
  ])('when the organization claim is %s, then the sign-in is refused, naming the claim', (_label, org) => {
    const outcome = identityOf(granted({ org }), DEFAULT_CLAIMS);

    expect(outcome).toEqual({ outcome: 'refused', reason: expect.stringContaining('claim "org"') });
  });

  test('when the organization claim is at the edge of the identifier rules, then it is accepted as it is', () => {
    const longest = `Ab_-${'9'.repeat(60)}`;

    expect(identityOf(granted({ org: longest }), DEFAULT_CLAIMS)).toMatchObject({ identity: { organizationId: longest } });
    expect(identityOf(granted({ org: 'a' }), DEFAULT_CLAIMS)).toMatchObject({ identity: { organizationId: 'a' } });
  });

  test('when the organization claim has another name, then that claim is read and "org" is ignored', () => {
    const names = { organizationClaim: 'https://example.com/org', permissionsClaim: 'scope' };
    const claims = { sub: 'idp|1', org: 'wrong', 'https://example.com/org': 'acme', scope: `openid ${MANAGE_PERMISSION}` };

    expect(identityOf(claims, names)).toMatchObject({ outcome: 'signed-in', identity: { organizationId: 'acme' } });
    expect(identityOf({ sub: 'idp|1', org: 'acme', scope: MANAGE_PERMISSION }, names)).toEqual({
      outcome: 'refused',
      reason: expect.stringContaining('claim "https://example.com/org"'),
    });
  });

  test.each([
    ['an array', [MANAGE_PERMISSION]],
    ['an array among others', ['authorizations:read', MANAGE_PERMISSION, 'profile:read']],
    ['a space-separated string', `openid profile ${MANAGE_PERMISSION} email`],
    ['a string of that permission alone', MANAGE_PERMISSION],
    ['an array with non-strings beside it', [1, null, { scope: 'x' }, MANAGE_PERMISSION]],
  ])('when the permissions are %s holding authorizations:write, then the sign-in succeeds', (_label, permissions) => {
    expect(identityOf(granted({ permissions }), DEFAULT_CLAIMS)).toMatchObject({ outcome: 'signed-in' });
  });

  test.each([
    ['missing', undefined],
    ['empty', []],
    ['read only', ['authorizations:read']],
    ['a longer permission', ['authorizations:write:all']],
    ['a prefix of it', 'authorizations:writ'],
    ['in another case', 'Authorizations:Write'],
    ['comma-separated', `openid,${MANAGE_PERMISSION}`],
    ['nested in an array', [[MANAGE_PERMISSION]]],
    ['an object', { [MANAGE_PERMISSION]: true }],
    ['true', true],
  ])('when the permissions are %s, then the sign-in is refused, naming authorizations:write', (_label, permissions) => {
    expect(identityOf(granted({ permissions }), DEFAULT_CLAIMS)).toEqual({
      outcome: 'refused',
      reason: expect.stringContaining(`"${MANAGE_PERMISSION}"`),
    });
  });

  test('when both the organization and the permission are wanting, then the organization is what the refusal names', () => {
    const outcome = identityOf({ sub: 'idp|1' }, DEFAULT_CLAIMS);

    expect(outcome).toEqual({ outcome: 'refused', reason: expect.stringContaining('organization') });
  });

  test('when the permission sits in another claim than the one configured, then it does not count', () => {
    const claims = granted({ permissions: undefined, scope: MANAGE_PERMISSION });

    expect(identityOf(claims, DEFAULT_CLAIMS)).toMatchObject({ outcome: 'refused' });
    expect(identityOf(claims, { ...DEFAULT_CLAIMS, permissionsClaim: 'scope' })).toMatchObject({ outcome: 'signed-in' });
  });

  describe('the name shown', () => {
    const displayNameOf = (claims: Record<string, unknown>) => {
      const outcome = identityOf(granted(claims), DEFAULT_CLAIMS);
      if (outcome.outcome !== 'signed-in') throw new Error(`expected a sign-in, got: ${outcome.reason}`);
      return outcome.identity.displayName;
    };

    test('when name, email and preferred_username are all there, then the name is shown', () => {
      expect(displayNameOf({ name: 'Ada Admin', email: 'ada@acme.example', preferred_username: 'ada' })).toBe('Ada Admin');
    });

    test('when there is no name, then the email is shown, and without it the preferred username', () => {
      expect(displayNameOf({ email: 'ada@acme.example', preferred_username: 'ada' })).toBe('ada@acme.example');
      expect(displayNameOf({ preferred_username: 'ada' })).toBe('ada');
    });

    test('when the name is empty or not a string, then the next one is shown', () => {
      expect(displayNameOf({ name: '', email: 'ada@acme.example' })).toBe('ada@acme.example');
      expect(displayNameOf({ name: 42, email: ['x'], preferred_username: 'ada' })).toBe('ada');
    });

    test('when no name of any kind is there, then the subject is shown', () => {
      expect(displayNameOf({})).toBe('idp|1234');
      expect(displayNameOf({ name: '', email: null, preferred_username: {} })).toBe('idp|1234');
    });

    test('when the name is very long, then the first 200 characters are kept', () => {
      expect(displayNameOf({ name: `${'n'.repeat(200)}overflow` })).toBe('n'.repeat(200));
    });

    test('when the name holds markup, then it is kept as text (the pages escape it)', () => {
      expect(displayNameOf({ name: '<script>alert(1)</script>' })).toBe('<script>alert(1)</script>');
    });
  });
});
