import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { closeServer, portOf } from '@rsd/platform';

/**
 * A secret-scanning provider as GitHub is one to its partners (decision 43): P-256 keys of its own,
 * listed at a key endpoint on loopback in GitHub's format (`{ public_keys: [{ key_identifier, key,
 * is_current }] }`, PEM), and reports signed with one of them (ECDSA with SHA-256 over the raw body,
 * DER, base64). A key can be made and kept unlisted, to sign as a provider the endpoint does not know.
 */
export interface SecretScanningProvider {
  /** What SECRET_SCANNING_KEYS_URL points at. */
  keysUrl: string;
  /** The identifier of the listed key that signs by default. */
  keyIdentifier: string;
  /** A signature of `body` by a key: the listed one by default. */
  sign(body: string, key?: SigningKey): string;
  /** A key of the provider's that the endpoint lists only once `list` is called. */
  newKey(): SigningKey;
  list(key: SigningKey): void;
  /** How many times the key list was fetched. */
  fetches(): number;
  close(): Promise<void>;
}

export interface SigningKey {
  identifier: string;
  privateKey: KeyObject;
  publicPem: string;
}

function aSigningKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    identifier: randomUUID().replaceAll('-', ''),
    privateKey,
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export function signReport(body: string, key: SigningKey): string {
  return sign('sha256', Buffer.from(body), { key: key.privateKey, dsaEncoding: 'der' }).toString('base64');
}

export async function startSecretScanningProvider(): Promise<SecretScanningProvider> {
  const current = aSigningKey();
  const listed = [current];
  let fetched = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/meta/public_keys/secret_scanning') {
      res.writeHead(404).end();
      return;
    }
    fetched += 1;
    const body = JSON.stringify({
      public_keys: listed.map((key) => ({ key_identifier: key.identifier, key: key.publicPem, is_current: key === current })),
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    keysUrl: `http://127.0.0.1:${portOf(server)}/meta/public_keys/secret_scanning`,
    keyIdentifier: current.identifier,
    sign: (body, key = current) => signReport(body, key),
    newKey: aSigningKey,
    list: (key) => {
      listed.push(key);
    },
    fetches: () => fetched,
    close: () => closeServer(server),
  };
}
