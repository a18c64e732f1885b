import { createHmac, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';

// JWTs as an attacker writes them, byte for byte: any header (`alg: none`, `kid`, `jku`, `jwk`…),
// any claim types, signed with whatever key the attack needs, or not at all. A library would refuse
// to produce most of them.

type Json = Record<string, unknown>;

const part = (value: Json | string) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

export function unsignedJwt(header: Json, payload: Json, signature = ''): string {
  return `${part(header)}.${part(payload)}.${signature}`;
}

/** HMAC over `header.payload` with `key` (which may be empty, or the text of a public key). */
export function hmacJwt(header: Json, payload: Json, key: string | Buffer, hash: 'sha256' | 'sha384' | 'sha512' = 'sha256'): string {
  const input = `${part(header)}.${part(payload)}`;
  return `${input}.${createHmac(hash, key).update(input).digest('base64url')}`;
}

/** RS256 with a private key of the attacker's own. */
export function rsaJwt(header: Json, payload: Json, privateKey: KeyObject): string {
  const input = `${part(header)}.${part(payload)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
}

export function attackerKeyPair(): { privateKey: KeyObject; publicJwk: Json; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey,
    publicJwk: { ...publicKey.export({ format: 'jwk' }), kid: 'attacker', alg: 'RS256', use: 'sig' },
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

export const nowInSeconds = () => Math.floor(Date.now() / 1000);
