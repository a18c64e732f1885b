import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOPICS } from '@rsd/contracts';
import { authorizationCreated, digestApiKey, generateApiKey, generateClientId, type StoredAuthorization } from '@rsd/domain';
import { formatEarlierLogLines } from '@rsd/embedded';
import { readDevSecret, signDevToken } from '@rsd/platform';
import { aCalculatedScore, aScoreSubmission, request, scoreCalculated } from '@rsd/testkit';
import { eventually, startEmbedded, type EmbeddedProcess } from '../support/embedded-process';

// The embedded database as a user meets it: a crash at any moment loses no acknowledged write, and a
// data directory written by the version before it (an NDJSON log and a JSON store) is taken over.

const ORG = 'storage-org';
let dataDir: string;
let product: EmbeddedProcess | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rsd-storage-'));
});

afterEach(async () => {
  await product?.stop();
  product = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

async function tokenFor(dir: string): Promise<string> {
  const secret = await readDevSecret(dir);
  if (!secret) throw new Error('the embedded runtime did not create its development secret');
  return signDevToken(secret, { org: ORG, scope: 'authorizations:write scores:write' });
}

function post(url: string, token: string, body: object) {
  return request<{ clientId: string; apiKey: string }>(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('the embedded database', () => {
  test('when the process is killed (SIGKILL) under writes, then every acknowledged score and authorization is there after a restart', async () => {
    product = await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    const token = await tokenFor(dataDir);
    const { credentials, scoreIngest } = product.urls;
    const reader = await post(`${credentials}/v1/organizations/${ORG}/authorizations`, token, {
      recipientType: 'auditor',
      scopes: ['qr_score', 'score_trend'],
    });
    expect(reader.status).toBe(201);

    const acknowledgedDates: string[] = [];
    const acknowledgedClientIds: string[] = [];
    let next = 0;
    let crashed = false;
    // Eight writers of scores and two of authorizations, until the crash; what was refused or cut off counts for nothing.
    const scoreWriter = async () => {
      while (!crashed && next < 360) {
        const scoreDate = daysAgo(next++);
        const answer = await post(`${scoreIngest}/v1/scores`, token, aScoreSubmission({ organizationId: ORG, scoreDate })).catch(
          () => undefined,
        );
        if (answer?.status === 202) acknowledgedDates.push(scoreDate);
      }
    };
    const authorizationWriter = async () => {
      while (!crashed) {
        const answer = await post(`${credentials}/v1/organizations/${ORG}/authorizations`, token, {
          recipientType: 'partner',
          scopes: ['qr_score'],
        }).catch(() => undefined);
        if (answer?.status === 201) acknowledgedClientIds.push(answer.body.clientId);
      }
    };
    const writers = [...Array.from({ length: 8 }, scoreWriter), authorizationWriter(), authorizationWriter()];
    await eventually(
      () => Promise.resolve(acknowledgedDates.length >= 60 && acknowledgedClientIds.length >= 10 ? true : undefined),
      60_000,
      10,
    );
    await product.kill();
    crashed = true;
    await Promise.all(writers);

    product = await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });

    const history = await request<{ scores: { scoreDate: string }[] }>(
      `${product.urls.readApi}/v1/customers/${reader.body.clientId}/score/history?limit=366&from=${daysAgo(400)}`,
      { headers: { 'x-api-key': reader.body.apiKey } },
    );
    expect(history.status).toBe(200);
    const stored = new Set(history.body.scores.map((item) => item.scoreDate));
    expect(acknowledgedDates.filter((date) => !stored.has(date))).toEqual([]);
    const listed = await request<{ authorizations: { clientId: string }[] }>(
      `${product.urls.credentials}/v1/organizations/${ORG}/authorizations`,
      {
        headers: { authorization: `Bearer ${token}` },
      },
    );
    const clientIds = new Set(listed.body.authorizations.map((authorization) => authorization.clientId));
    expect(acknowledgedClientIds.filter((clientId) => !clientIds.has(clientId))).toEqual([]);
  }, 120_000);

  test('when it starts on a data directory of the version before it, then the authorizations, scores and access log it held are served', async () => {
    const apiKey = generateApiKey('rsk');
    const record: StoredAuthorization = {
      clientId: generateClientId('rs'),
      organizationId: ORG,
      recipientType: 'insurance_provider',
      recipientName: 'Upgrade Insurance',
      scopes: ['qr_score'],
      keyDigest: digestApiKey(apiKey),
      expiresAt: null,
      createdAt: '2026-11-01T09:00:00.000Z',
      revokedAt: null,
      expiredAt: null,
      revision: 1,
    };
    const created = authorizationCreated(record, { id: 'upgrade-created', time: new Date(record.createdAt) });
    const score = scoreCalculated(aCalculatedScore(ORG, daysAgo(2), { score: 64 }));
    await writeFile(
      join(dataDir, 'events.ndjson'),
      formatEarlierLogLines([
        { topic: TOPICS.authorizations, key: record.clientId, value: JSON.stringify(created) },
        { topic: TOPICS.scores, key: ORG, value: JSON.stringify(score) },
      ]),
    );
    await writeFile(join(dataDir, 'authorizations.json'), JSON.stringify({ authorizations: [{ record, outbox: [] }] }));
    // The access log as files (access-log/): an entry per line, without its Client ID, and each minute's successful reads.
    const recorded = {
      at: `${daysAgo(1)}T10:00:00.000Z`,
      resource: 'score',
      status: 200,
      code: null,
      clientAddress: '198.51.100.7',
      requestId: 'upgrade-1',
    };
    await mkdir(join(dataDir, 'access-log', 'entries', daysAgo(1)), { recursive: true });
    await writeFile(
      join(dataDir, 'access-log', 'entries', daysAgo(1), `${record.clientId}.ndjson`),
      `${JSON.stringify({ id: 'upgrade-read-1', ...recorded })}\n`,
    );
    await mkdir(join(dataDir, 'access-log', 'usage'));
    const minute = { clientId: record.clientId, minute: `${daysAgo(1)}T10:00:00.000Z`, reads: 1, lastUsedAt: recorded.at };
    await writeFile(join(dataDir, 'access-log', 'usage', `${daysAgo(1)}.ndjson`), `${JSON.stringify(minute)}\n`);

    product = await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });

    const read = await request<{ score: number }>(`${product.urls.readApi}/v1/customers/${record.clientId}/score`, {
      headers: { 'x-api-key': apiKey },
    });
    expect(read.status).toBe(200);
    expect(read.body.score).toBe(64);
    const listed = await request<{ authorizations: { clientId: string; recipientName: string }[] }>(
      `${product.urls.credentials}/v1/organizations/${ORG}/authorizations`,
      { headers: { authorization: `Bearer ${await tokenFor(dataDir)}` } },
    );
    expect(listed.body.authorizations).toEqual([
      expect.objectContaining({ clientId: record.clientId, recipientName: 'Upgrade Insurance' }),
    ]);
    const asAdmin = { headers: { authorization: `Bearer ${await tokenFor(dataDir)}` } };
    const authorizationUrl = `${product.urls.credentials}/v1/organizations/${ORG}/authorizations/${record.clientId}`;
    expect((await request(`${authorizationUrl}/access-log`, asAdmin)).body).toEqual({ items: [recorded], nextCursor: null });
    expect((await request(authorizationUrl, asAdmin)).body).toMatchObject({ lastUsedAt: recorded.at, usage: { last30d: 1 } });
    expect(await readdir(dataDir)).toEqual(
      expect.arrayContaining([
        'events.ndjson.imported',
        'authorizations.json.imported',
        'rsd.sqlite',
        'access-log.imported',
        'access-log.sqlite',
      ]),
    );
    expect(product.output()).toContain('imported a file written by an earlier version');
  }, 90_000);
});
