import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateApiKey } from '@rsd/domain';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventLogValues, rsdCreateArgs, runRsd, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';

const ORG = 'claim-org';

let dataDir: string;
let product: EmbeddedProcess;
let token: string;
/** Every raw secret the run made: claim tokens and keys, searched for at the end. */
const secrets: string[] = [];

/** The real `rsd` bin; never throws. */
function rsd(args: string[]) {
  return runRsd(args, { DATA_DIR: dataDir, RSD_API_URL: product.urls.readApi, RSD_CREDENTIALS_URL: product.urls.credentials });
}

interface Linked {
  clientId: string;
  keyClaimed: boolean;
  claim: { url: string; expiresAt: string };
}

async function createWithLink(): Promise<Linked> {
  const linked = await orgAdmin.createAuthorization<Linked & { apiKey: string }>(product.urls.credentials, ORG, token, {
    recipientType: 'insurance_provider',
    recipientName: 'Example Insurance',
    scopes: ['qr_score'],
    keyDelivery: 'claimLink',
  });
  secrets.push(tokenOf(linked.claim.url));
  return linked;
}

const tokenOf = (url: string) => url.split('/').pop() ?? '';
const describeLink = (url: string) => request(url, { headers: { accept: 'application/json' } });
const claim = async (url: string) => {
  const answer = await request<{ clientId: string; apiKey: string }>(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: '{}',
  });
  if (answer.status === 201) secrets.push(answer.body.apiKey);
  return answer;
};
const readScore = (clientId: string, apiKey: string) =>
  request(`${product.urls.readApi}/v1/customers/${clientId}/score`, { headers: { 'x-api-key': apiKey } });
const admin = (path: string) => `${product.urls.credentials}/v1/organizations/${ORG}/authorizations/${path}`;
const postAsAdmin = (path: string) => request(admin(path), { method: 'POST', headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  // Every request comes from 127.0.0.1: the refused reads and claims below must not reach the per-address limit.
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-claim-', { FAILED_AUTH_LIMIT_PER_MINUTE: '10000' }));
  token = await devTokenFor(dataDir, ORG);
  await orgAdmin.postScore(product.urls.scoreIngest, token, aScoreSubmission({ organizationId: ORG, scoreDate: '2026-11-20', score: 71 }));
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

describe('one-time claim links (decision 38) on the embedded runtime', () => {
  test('when a link is opened twice and then claimed, then nothing was consumed until the claim, whose key reads /score, and a second claim is 410', async () => {
    const linked = await createWithLink();
    expect(linked).toMatchObject({ keyClaimed: false, claim: { url: expect.stringContaining(`${product.urls.console}/claim/`) } });
    expect(linked).not.toHaveProperty('apiKey');

    const [first, second] = [await describeLink(linked.claim.url), await describeLink(linked.claim.url)];
    expect(first).toMatchObject({ status: 200, body: { organizationId: ORG, clientId: linked.clientId, scopes: ['qr_score'] } });
    expect(second.body).toEqual(first.body);
    const page = await request(linked.claim.url);
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain('Example Insurance');

    // Before the claim there is no key: any well-formed key is refused as invalid.
    expect(await readScore(linked.clientId, generateApiKey('rsk'))).toMatchObject({ status: 401, body: { code: 'INVALID_API_KEY' } });
    const subscribe = await request(`${product.urls.notifier}/v1/customers/${linked.clientId}/webhooks`, {
      headers: { 'x-api-key': generateApiKey('rsk') },
    });
    expect(subscribe).toMatchObject({ status: 401, body: { code: 'INVALID_API_KEY' } });

    const claimed = await claim(linked.claim.url);
    expect(claimed).toMatchObject({ status: 201, body: { clientId: linked.clientId, apiKey: expect.stringMatching(/^rsk_/) } });
    expect(await readScore(linked.clientId, claimed.body.apiKey)).toMatchObject({ status: 200, body: { score: 71 } });
    expect(await claim(linked.claim.url)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_USED' } });

    const record = await request(admin(linked.clientId), { headers: { authorization: `Bearer ${token}` } });
    expect(record.body).toMatchObject({ keyClaimed: true, claimedAt: expect.any(String), claimedFromAddress: expect.any(String) });
    const log = await request(admin(`${linked.clientId}/access-log`), { headers: { authorization: `Bearer ${token}` } });
    expect(log.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ resource: 'claim', status: 201, code: null }),
        expect.objectContaining({ resource: 'claim', status: 410, code: 'CLAIM_LINK_USED' }),
      ]),
    );
  });

  test('when a new link is issued, then the old link is unknown and the new one claims', async () => {
    const linked = await createWithLink();

    const reissued = await postAsAdmin(`${linked.clientId}/claim-link`);
    expect(reissued.status).toBe(200);
    const fresh = (reissued.body as Linked).claim.url;
    secrets.push(tokenOf(fresh));

    expect(await claim(linked.claim.url)).toMatchObject({ status: 404, body: { code: 'CLAIM_LINK_NOT_FOUND' } });
    expect((await claim(fresh)).status).toBe(201);
  });

  test('when the authorization is revoked, then its link is dead', async () => {
    const linked = await createWithLink();

    expect((await postAsAdmin(`${linked.clientId}/revoke`)).status).toBe(200);

    expect(await describeLink(linked.claim.url)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_EXPIRED' } });
    expect(await claim(linked.claim.url)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_EXPIRED' } });
  });

  test('when an organization creates with --key-delivery claim-link and the recipient runs rsd claim, then the key reads /score', async () => {
    const created = await rsd(rsdCreateArgs(ORG, 'auditor', 'qr_score', '--key-delivery', 'claim-link', '--claim-valid', '24h', '--env'));
    expect(created.code).toBe(0);
    const exported = Object.fromEntries([...created.stdout.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1], m[2]]));
    expect(Object.keys(exported)).toEqual(['CLIENT_ID', 'RSD_CLAIM_URL']);
    secrets.push(tokenOf(exported.RSD_CLAIM_URL ?? ''));

    const claimed = await rsd(['claim', exported.RSD_CLAIM_URL ?? '']);
    expect(claimed.code).toBe(0);
    const { clientId, apiKey } = JSON.parse(claimed.stdout) as { clientId: string; apiKey: string };
    secrets.push(apiKey);
    expect(clientId).toBe(exported.CLIENT_ID);
    expect((await readScore(clientId, apiKey)).status).toBe(200);

    const again = await rsd(['claim', exported.RSD_CLAIM_URL ?? '']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('CLAIM_LINK_USED');
  });

  test('when the run is over, then no claim token or key is in the output, the event log or any file of the data directory', async () => {
    const files = (await readdir(dataDir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    const stored = await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')));
    const haystacks = [product.output(), eventLogValues(dataDir).join('\n'), ...stored];

    expect(secrets.length).toBeGreaterThanOrEqual(8);
    expect(product.output()).toContain('/claim/[redacted]');
    for (const secret of secrets) for (const haystack of haystacks) expect(haystack.includes(secret)).toBe(false);
  });
});
