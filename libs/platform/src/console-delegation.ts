import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  exportJWK,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import type { SecretSpec } from '@rsd/ports';
import { env } from './config';
import type { CallerClaims, TokenVerifier } from './caller-auth';

/**
 * The console is a client of the credentials service's and the notifier's APIs (decision 51). It holds
 * no token of the signed-in person's identity provider (the development link signs in with none), so
 * it presents one of its own: signed with the console's Ed25519 key (EdDSA), for one API (`aud`),
 * naming the person (`sub`, and their own issuer in `person_iss`), their organization (`org`) and what
 * they may do (`scope`), valid for at most a minute. The APIs verify it with the console's public key
 * only: no secret is shared between the console and another service.
 */
export const CONSOLE_ISSUER = 'rsd-console';
/** Each API its own audience: a token the console made for the notifier is refused by the credentials service, and the other way round. */
export const CONSOLE_AUDIENCES = { credentials: 'rsd-credentials', notifier: 'rsd-notifier' } as const;
export type ConsoleAudience = (typeof CONSOLE_AUDIENCES)[keyof typeof CONSOLE_AUDIENCES];
/** The claim that carries the signed-in person's own issuer (the identity provider's `iss`, or the development link's). */
export const PERSON_ISSUER_CLAIM = 'person_iss';
/** Decision 38's claim page: the browser's address as the console saw it, for the credentials service's per-address counting. */
export const CLIENT_ADDRESS_CLAIM = 'client_addr';
export const CONSOLE_TOKEN_LIFETIME_SECONDS = 60;
/** Where the console publishes its public keys. */
export const CONSOLE_JWKS_PATH = '/.well-known/jwks.json';

/** The console's signing key: an Ed25519 private key, PKCS #8 DER in base64url, one line (an environment variable or a mounted file). */
export const CONSOLE_SIGNING_KEY: SecretSpec = {
  variable: 'CONSOLE_SIGNING_KEY',
  file: 'console-signing-key',
  generate: () => generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url'),
  requiredBecause: 'the console signs the tokens it presents to the APIs with it',
};

/** A private key as CONSOLE_SIGNING_KEY carries it; anything else (another curve, RSA, noise) is refused. */
export function consoleSigningKeyOf(value: string): KeyObject {
  const key = createPrivateKey({ key: Buffer.from(value.trim(), 'base64url'), format: 'der', type: 'pkcs8' });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('must be an Ed25519 private key');
  return key;
}

export interface ConsoleTokenClaims {
  organizationId: string;
  subject: string;
  /** The person's own issuer: the identity provider's `iss`, or the development sign-in link's. */
  personIssuer: string;
  /** Space-separated, from the person's permissions. */
  scope: string;
}

export interface ConsoleSigner {
  /** A token for one API, on behalf of the signed-in person, valid for a minute. */
  sign(audience: ConsoleAudience, claims: ConsoleTokenClaims): Promise<string>;
  /** For the claim page: the console vouches for the browser's address, and names no person. */
  signClientAddress(address: string): Promise<string>;
  /** The public half, as the console publishes it at /.well-known/jwks.json. */
  jwks(): Promise<JSONWebKeySet>;
}

export function consoleSigner(privateKey: KeyObject): ConsoleSigner {
  const publicJwk = (async (): Promise<JWK> => {
    const jwk = await exportJWK(createPublicKey(privateKey));
    return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'EdDSA', use: 'sig' };
  })();
  const sign = async (audience: ConsoleAudience, subject: string, payload: Record<string, unknown>) =>
    new SignJWT(payload)
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: (await publicJwk).kid! })
      .setIssuer(CONSOLE_ISSUER)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime(`${CONSOLE_TOKEN_LIFETIME_SECONDS}s`)
      .sign(privateKey);
  return {
    sign: (audience, claims) =>
      sign(audience, claims.subject, { org: claims.organizationId, scope: claims.scope, [PERSON_ISSUER_CLAIM]: claims.personIssuer }),
    signClientAddress: (address) => sign(CONSOLE_AUDIENCES.credentials, 'claim-page', { [CLIENT_ADDRESS_CLAIM]: address }),
    jwks: async () => ({ keys: [await publicJwk] }),
  };
}

export const consoleVerificationConfigShape = {
  /** Where the console publishes its public keys (`https://console…/.well-known/jwks.json`). */
  CONSOLE_JWKS_URL: env.optionalHttpUrl(),
  /** Or the console's public key itself: a JWK (JSON) or an SPKI PEM. */
  CONSOLE_PUBLIC_KEY: env
    .optionalString()
    .refine((value) => value === undefined || publicKeyOf(value) !== undefined, 'must be an Ed25519 public key (a JWK, or SPKI PEM)'),
};

/** Where an API finds the console's public key: configured, or (the embedded runtime) the console of the same process. */
export function consoleKeySource(
  config: { CONSOLE_JWKS_URL?: string | undefined; CONSOLE_PUBLIC_KEY?: string | undefined },
  localConsoleUrl: string | undefined,
): ConsoleKeySource | undefined {
  if (config.CONSOLE_PUBLIC_KEY) return { publicKey: config.CONSOLE_PUBLIC_KEY };
  const jwksUrl = config.CONSOLE_JWKS_URL ?? (localConsoleUrl && `${localConsoleUrl.replace(/\/+$/, '')}${CONSOLE_JWKS_PATH}`);
  return jwksUrl ? { jwksUrl } : undefined;
}

export type ConsoleKeySource = { jwksUrl: string } | { publicKey: string } | { getKey: JWTVerifyGetKey };

function publicKeyOf(value: string): KeyObject | undefined {
  try {
    const text = value.trim();
    const key = text.startsWith('{')
      ? createPublicKey({ key: JSON.parse(text) as Record<string, string>, format: 'jwk' })
      : createPublicKey(text);
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}

function keyGetterOf(source: ConsoleKeySource): JWTVerifyGetKey {
  if ('getKey' in source) return source.getKey;
  if ('jwksUrl' in source) return createRemoteJWKSet(new URL(source.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
  const key = publicKeyOf(source.publicKey);
  if (!key) throw new Error('CONSOLE_PUBLIC_KEY is not an Ed25519 public key');
  return () => key;
}

/** A key getter over a JWKS held in memory (tests, and a process that has the console's keys at hand). */
export const consoleKeysOf = (jwks: JSONWebKeySet): ConsoleKeySource => ({ getKey: createLocalJWKSet(jwks) });

/** Verifies a console token for `audience` alone: EdDSA with the console's key, its issuer, at most a minute old. */
function consoleTokenVerifier(source: ConsoleKeySource, audience: ConsoleAudience) {
  const getKey = keyGetterOf(source);
  return async (token: string, requiredClaims: string[]) => {
    const { payload } = await jwtVerify(token, getKey, {
      issuer: CONSOLE_ISSUER,
      audience,
      algorithms: ['EdDSA'],
      requiredClaims: ['exp', 'iat', 'sub', ...requiredClaims],
      maxTokenAge: `${CONSOLE_TOKEN_LIFETIME_SECONDS}s`,
    });
    // A token that claims to live longer than the console ever signs for is not the console's.
    if (payload.exp! - payload.iat! > CONSOLE_TOKEN_LIFETIME_SECONDS) throw new Error('a console token lives at most a minute');
    return payload;
  };
}

/**
 * `verify`, and beside it the console's tokens when the API knows the console's key: a token that names
 * the console as its issuer is checked against that key alone, never against the callers' keys, and the
 * other way round. The caller is then the person the console names, `via: 'console'`.
 */
export function withConsoleTokens(verify: TokenVerifier, source: ConsoleKeySource | undefined, audience: ConsoleAudience): TokenVerifier {
  if (!source) return verify;
  const verifyConsole = consoleTokenVerifier(source, audience);
  return async (token) => {
    if (issuerOf(token) !== CONSOLE_ISSUER) return verify(token);
    const payload = await verifyConsole(token, ['org', PERSON_ISSUER_CLAIM]);
    const personIssuer = payload[PERSON_ISSUER_CLAIM];
    if (typeof payload.org !== 'string') throw new Error('the org claim must be a string');
    if (typeof personIssuer !== 'string') throw new Error(`the ${PERSON_ISSUER_CLAIM} claim must be a string`);
    const claims: CallerClaims = {
      subject: payload.sub,
      organization: payload.org,
      scopes: new Set(typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []),
      issuer: personIssuer,
      via: 'console',
    };
    return claims;
  };
}

/** The claim page's address as the console vouches for it, or undefined when the token is not a valid one of those. */
export function consoleClientAddressVerifier(source: ConsoleKeySource | undefined): (token: string) => Promise<string | undefined> {
  if (!source) return () => Promise.resolve(undefined);
  const verifyConsole = consoleTokenVerifier(source, CONSOLE_AUDIENCES.credentials);
  return async (token) => {
    try {
      const address = (await verifyConsole(token, [CLIENT_ADDRESS_CLAIM]))[CLIENT_ADDRESS_CLAIM];
      return typeof address === 'string' && address.length <= 64 ? address : undefined;
    } catch {
      return undefined;
    }
  };
}

/** The unverified issuer, only to choose the key: whichever key is chosen then verifies the whole token. */
function issuerOf(token: string): string | undefined {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}
