import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventLogValues, startEmbedded, type EmbeddedProcess } from '../support/embedded-process';
import { runRsd } from '../support/rsd-cli';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import { installCertificateTools, readPdf, verifiedByJoserfc, withOneByteChanged } from '../support/certificate-checks';
import { certificateScenarios } from '../support/certificate-scenarios';
import { sealedLogScenarios } from '../support/sealed-log-scenarios';
import * as orgAdmin from '../support/organization-admin';

/** An Ed25519 signing key as RESPONSE_SIGNING_KEYS lists it; without `d` when only published. */
function aSigningKey(kid: string) {
  const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return { signing: { kty: 'OKP', crv: 'Ed25519', x, d, kid }, published: { kty: 'OKP', crv: 'Ed25519', x, kid } };
}

const before = aSigningKey('certificates-before-rotation');
const after = aSigningKey('certificates-after-rotation');

let dataDir: string;
let product: EmbeddedProcess;

beforeAll(async () => {
  await installCertificateTools();
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-certificates-', {
    RESPONSE_SIGNING_KEYS: JSON.stringify([before.signing]),
  }));
}, 180_000);

afterAll(() => stopAndRemove(product, dataDir));

const target = () => ({
  credentials: product.urls.credentials,
  scoreIngest: product.urls.scoreIngest,
  readApis: [product.urls.readApi],
  tokenFor: (org: string) => devTokenFor(dataDir, org),
});
const scenarios = certificateScenarios(target);
// Decision 56: the log a certificate's name and score come from holds neither readable (rsd.sqlite's events).
const sealedLog = sealedLogScenarios(() => ({ ...target(), logValues: () => Promise.resolve(eventLogValues(dataDir)) }));

/** The real `rsd` bin against this product. */
const rsd = (args: string[], apiKey = '') => runRsd(args, { RSD_API_URL: product.urls.readApi, RSD_API_KEY: apiKey });

describe('score certificates (decision 55) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries({ ...scenarios, ...sealedLog })) test(name, scenario, 120_000);

  test('when a recipient uses rsd: gets a certificate and its PDF, saves the keys, and verifies it offline; one changed byte fails', async () => {
    const org = 'cert-cli';
    const token = await devTokenFor(dataDir, org);
    await orgAdmin.postScore(
      product.urls.scoreIngest,
      token,
      aScoreSubmission({ organizationId: org, scoreDate: '2026-11-20', score: 77 }),
    );
    const { clientId, apiKey } = await orgAdmin.createAuthorization(product.urls.credentials, org, token, {
      recipientType: 'auditor',
      scopes: ['qr_score'],
    });
    const [saved, keys, pdf] = ['certificate.json', 'keys.json', 'certificate.pdf'].map((name) => join(dataDir, name)) as [
      string,
      string,
      string,
    ];

    const got = await rsd(['certificate', 'get', '--client-id', clientId, '--as-of', '2026-11-25', '--verify'], apiKey);
    expect(got).toMatchObject({ code: 0, stderr: expect.stringMatching(/certificate JWS verified \(key /) });
    await writeFile(saved, got.stdout);
    expect((await rsd(['certificate', 'keys'])).code).toBe(0);
    await writeFile(keys, (await rsd(['certificate', 'keys'])).stdout);
    expect((await rsd(['certificate', 'get', '--client-id', clientId, '--pdf', pdf], apiKey)).code).toBe(0);

    const verified = await rsd(['certificate', 'verify', saved, '--keys', keys]);
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ score: 77, scoreDate: '2026-11-20', asOf: '2026-11-25' });
    const fromPdf = join(dataDir, 'from-pdf.jws');
    await writeFile(fromPdf, (await readPdf(await readFile(pdf))).keywords);
    expect((await rsd(['certificate', 'verify', fromPdf, '--keys', keys])).code).toBe(0);

    const { jws } = JSON.parse(got.stdout) as { jws: string };
    await writeFile(saved, withOneByteChanged(jws));
    const refused = await rsd(['certificate', 'verify', saved, '--keys', keys]);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/certificate NOT valid/) });
    expect((await rsd(['certificate', 'get', '--client-id', clientId, '--as-of', '2026-11-19'], apiKey)).stderr).toMatch(
      /404|SCORE_NOT_FOUND/,
    );
  }, 120_000);

  test('when the signing key is rotated, then a certificate signed before still verifies against the published keys, and new ones name the new key', async () => {
    const org = 'cert-rotation';
    const token = await devTokenFor(dataDir, org);
    await orgAdmin.postScore(product.urls.scoreIngest, token, aScoreSubmission({ organizationId: org, scoreDate: '2026-11-20' }));
    const credential = await orgAdmin.createAuthorization(product.urls.credentials, org, token, {
      recipientType: 'auditor',
      scopes: ['qr_score'],
    });
    const certificate = async () => {
      const answer = await request<{ jws: string }>(`${product.urls.readApi}/v1/customers/${credential.clientId}/certificate`, {
        headers: { 'x-api-key': credential.apiKey },
      });
      expect(answer.status).toBe(200);
      return answer.body.jws;
    };
    const keySet = async () => (await request(`${product.urls.readApi}/.well-known/jwks.json`)).body as object;
    const signedBefore = await certificate();

    // The new key signs; the old one stays listed without its private part, published for verification only.
    await product.stop();
    product = await startEmbedded({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      RESPONSE_SIGNING_KEYS: JSON.stringify([after.signing, before.published]),
    });

    const publishedAfter = await keySet();
    expect(await verifiedByJoserfc(signedBefore, publishedAfter)).toMatchObject({
      valid: true,
      header: { kid: 'certificates-before-rotation' },
    });
    expect(await verifiedByJoserfc(await certificate(), publishedAfter)).toMatchObject({
      valid: true,
      header: { kid: 'certificates-after-rotation' },
    });
    // Without the retired key in the set, the old certificate has nothing to verify against.
    expect(await verifiedByJoserfc(signedBefore, { keys: [after.published] })).toMatchObject({ valid: false });
  }, 180_000);
});
