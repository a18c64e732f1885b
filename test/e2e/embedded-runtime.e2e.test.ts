import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventLogValues, eventually, startEmbedded, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';

// The whole product as a newcomer runs it: `npm start`, then HTTP only. One process lifetime per
// describe block; the data directory outlives the first process to prove a restart loses nothing.

const ORG = 'e2e-org';
const TODAY = new Date().toISOString().slice(0, 10);

let dataDir: string;
let product: EmbeddedProcess;
const outputs: string[] = [];
const issuedKeys: string[] = [];
let token: string;

interface Created extends orgAdmin.IssuedCredential {
  status: string;
}

async function createAuthorization(body: object): Promise<Created> {
  const created = await orgAdmin.createAuthorization<Created>(product.urls.credentials, ORG, token, body);
  issuedKeys.push(created.apiKey);
  return created;
}

function read(resource: string, credential: { clientId: string; apiKey: string }) {
  return request(`${product.urls.readApi}/v1/customers/${credential.clientId}/${resource}`, {
    headers: { 'x-api-key': credential.apiKey },
  });
}

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-e2e-'));
  token = await devTokenFor(dataDir, ORG);
}, 90_000);

afterAll(async () => {
  if (product) outputs.push(product.output());
  await stopAndRemove(product, dataDir);
});

describe('the embedded runtime, end to end over HTTP', () => {
  let reader: Created;

  test('when it starts for the first time, then it prints how to get going', () => {
    expect(product.output()).toContain('export TOKEN=');
    expect(product.output()).toContain('/v1/scores');
  });

  test('when an organization creates an authorization, then the key is shown once and never again', async () => {
    reader = await createAuthorization({
      recipientType: 'insurance_provider',
      recipientName: 'Insurer',
      scopes: ['qr_score', 'pillar_breakdown'],
    });
    expect(reader.apiKey).toMatch(/^rsk_/);
    expect(reader.status).toBe('active');

    const listed = await request(`${product.urls.credentials}/v1/organizations/${ORG}/authorizations/${reader.clientId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(reader.apiKey);
  });

  test('when no score has been posted yet, then the score is 404 SCORE_NOT_FOUND', async () => {
    const answer = await read('score', reader);
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('SCORE_NOT_FOUND');
  });

  test('when a scoring engine posts a score, then the recipient reads the score and the pillars', async () => {
    const posted = await request(`${product.urls.scoreIngest}/v1/scores`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(aScoreSubmission({ organizationId: ORG, scoreDate: TODAY, score: 81, grade: 'Optimize' })),
    });
    expect(posted.status).toBe(202);
    expect(posted.body).toEqual({ accepted: 1 });

    const score = await eventually(async () => {
      const answer = await read('score', reader);
      return answer.status === 200 ? answer : undefined;
    });
    expect(score.body).toEqual({ clientId: reader.clientId, scoreDate: TODAY, score: 81, grade: 'Optimize' });

    const pillars = await read('pillars', reader);
    expect(pillars.status).toBe(200);
    expect(pillars.body).toEqual({
      clientId: reader.clientId,
      scoreDate: TODAY,
      pillarScores: { structuralIntegrity: 70, failureResistance: 75, deviceHealth: 68, recoveryCapability: 77 },
    });
  });

  test('when the organization revokes, then the very next request is CREDENTIAL_INACTIVE', async () => {
    const doomed = await createAuthorization({ recipientType: 'auditor', scopes: ['qr_score'] });
    expect((await read('score', doomed)).status).toBe(200);

    const revoked = await request(`${product.urls.credentials}/v1/organizations/${ORG}/authorizations/${doomed.clientId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');

    const next = await read('score', doomed);
    expect(next.status).toBe(401);
    expect(next.body.code).toBe('CREDENTIAL_INACTIVE');
  });

  test('when an authorization reaches its expiresAt, then it stops working', async () => {
    const expiresAt = new Date(Date.now() + 3000).toISOString();
    const shortLived = await createAuthorization({ recipientType: 'partner', scopes: ['qr_score'], expiresAt });
    expect((await read('score', shortLived)).status).toBe(200);

    // Refused once the time has come, and not before it: the first refused read left at most about a read's time
    // before expiresAt (a second's room for a slow machine; a key that ended early would be refused seconds sooner).
    const after = await eventually(async () => {
      const sentAt = Date.now();
      const answer = await read('score', shortLived);
      return answer.status === 200 ? undefined : { ...answer, sentAt };
    }, 10_000);
    expect(after.sentAt).toBeGreaterThanOrEqual(Date.parse(expiresAt) - 1_000);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('CREDENTIAL_INACTIVE');

    const record = await eventually(async () => {
      const answer = await request(`${product.urls.credentials}/v1/organizations/${ORG}/authorizations/${shortLived.clientId}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return answer.body.status === 'expired' ? answer.body : undefined;
    });
    expect(record.status).toBe('expired');
    const expired = await eventually(() => {
      const values = eventLogValues(dataDir).filter((value) => value.includes(shortLived.clientId));
      return Promise.resolve(values.some((value) => value.includes('authorization.expired.v1')) ? values : undefined);
    });
    expect(expired.some((value) => value.includes('com.resiliencescore.authorization.expired.v1'))).toBe(true);
  });

  test('when a recipient exceeds 120 requests a minute, then it gets 429 with Retry-After', async () => {
    const busy = await createAuthorization({ recipientType: 'regulatory_body', scopes: ['qr_score'] });
    const statuses: number[] = [];
    for (let i = 0; i < 120; i += 1) statuses.push((await read('score', busy)).status);
    expect(statuses.every((status) => status === 200)).toBe(true);

    const limited = await read('score', busy);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.body.code).toBeUndefined();
  });

  test('when each service is asked for anything, then every answer carries nosniff (decision 33)', async () => {
    const { readApi, credentials, scoreIngest } = product.urls;
    const answers = await Promise.all(
      [
        `${readApi}/healthz`,
        `${readApi}/readyz`,
        `${readApi}/metrics`,
        `${readApi}/v1/openapi.json`,
        `${readApi}/v1/customers/${reader.clientId}/score`,
        `${readApi}/v1/customers/nope/score`,
        `${readApi}/v1/no-such-path`,
        `${credentials}/healthz`,
        `${credentials}/v1/organizations/${ORG}/authorizations`,
        `${scoreIngest}/docs`,
        `${scoreIngest}/v1/scores`,
      ].map((url) => fetch(url, { headers: { 'x-api-key': reader.apiKey } })),
    );

    expect(answers.map((answer) => [answer.url, answer.headers.get('x-content-type-options')])).toEqual(
      answers.map((answer) => [answer.url, 'nosniff']),
    );
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 400, 401, 404, 405]));
  });

  test('when the services are asked how they are, then each has its own metrics and the read API its readiness checks', async () => {
    const { readApi, credentials, scoreIngest } = product.urls;
    for (const [url, service] of [
      [readApi, 'read-api'],
      [credentials, 'credentials'],
      [scoreIngest, 'score-ingest'],
    ] as const) {
      const metrics = await fetch(`${url}/metrics`).then((answer) => answer.text());
      expect(metrics).toContain(`service="${service}"`);
      expect(metrics).not.toContain('service="unnamed"');
    }
    const ready = await request(`${readApi}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { projection: 'ok' } });
  });

  test('when the process restarts, then authorizations, revocations and scores are all still there', async () => {
    await product.stop();
    // npm dies of the signal itself; the node process it ran must have shut down cleanly.
    expect(product.output()).toContain('"msg":"stopped"');
    outputs.push(product.output());
    product = await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });

    const score = await read('score', reader);
    expect(score.status).toBe(200);
    expect(score.body.score).toBe(81);

    const list = await request(`${product.urls.credentials}/v1/organizations/${ORG}/authorizations`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(list.status).toBe(200);
    const statuses = (list.body.authorizations as { status: string }[]).map((a) => a.status).sort();
    expect(statuses).toEqual(['active', 'active', 'expired', 'revoked']);
  }, 90_000);

  test('when the run is over, then no raw API key appears in any log, the event log, any store or the access log', async () => {
    outputs.push(product.output());
    expect(issuedKeys.length).toBeGreaterThanOrEqual(4);
    // Every file, the access log's (decision 21) included: its entries and usage counts are in access-log.sqlite.
    const entries = await readdir(dataDir, { recursive: true, withFileTypes: true });
    const files = entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
    const names = files.map((file) => file.slice(dataDir.length + 1));
    expect(names).toContain('rsd.sqlite');
    expect(names).toContain('access-log.sqlite');
    const haystacks = [...outputs, ...(await Promise.all(files.map((file) => readFile(file, 'utf8'))))];
    for (const key of issuedKeys) {
      for (const haystack of haystacks) expect(haystack.includes(key)).toBe(false);
    }
  });
});
