import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventually as polled, notifierSettled, REPO_ROOT, startEmbedded, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';
import { freePort } from '../support/raw-http';
import { runRsd } from '../support/rsd-cli';

// Webhooks as a recipient meets them on `npm start`: an authorization made through the credentials
// API, a subscription made with `rsd webhooks create`, deliveries received by `rsd webhooks listen`
// (a separate process, verifying each signature), a score posted to score ingest.

const ORG = 'webhook-org';

let dataDir: string;
let product: EmbeddedProcess;
let token: string;
const issued: string[] = [];

interface Delivery {
  verified: boolean;
  id: string;
  type: string;
  data: Record<string, unknown>;
}

beforeAll(async () => {
  // Receivers on loopback, so the development flag of decision 28.
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-webhooks-', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }));
  token = await devTokenFor(dataDir, ORG);
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

const rsd = (args: string[], env: Record<string, string> = {}) =>
  runRsd(args, { DATA_DIR: dataDir, RSD_NOTIFIER_URL: product.urls.notifier, ...env });

const eventually = <T>(check: () => T | undefined, timeoutMs = 5_000) => polled(() => Promise.resolve(check()), timeoutMs, 25);

async function createAuthorization(scopes: string[]): Promise<orgAdmin.IssuedCredential> {
  const created = await orgAdmin.createAuthorization(product.urls.credentials, ORG, token, { recipientType: 'insurance_provider', scopes });
  issued.push(created.apiKey);
  return created;
}

const postScore = (scoreDate: string, score: number) =>
  orgAdmin.postScore(product.urls.scoreIngest, token, aScoreSubmission({ organizationId: ORG, scoreDate, score }));

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

describe('webhooks on the embedded runtime, end to end', () => {
  test('when a score changes, a receiver that fails once gets it on the retry with the same webhook-id; on revoke it gets authorization.ended once', async () => {
    const credential = await createAuthorization(['qr_score']);
    const port = await freePort();
    const created = await rsd(
      [
        'webhooks',
        'create',
        '--client-id',
        credential.clientId,
        '--url',
        `http://127.0.0.1:${port}/hooks`,
        '--events',
        'score.updated,authorization.ended',
      ],
      { RSD_API_KEY: credential.apiKey },
    );
    expect(created.code).toBe(0);
    expect(created.stderr).toMatch(/secret/i);
    const subscription = JSON.parse(created.stdout) as { id: string; secret: string };
    const listener = await listenOn(port, subscription.secret, 1);
    try {
      await postScore(daysAgo(1), 77);

      // Within 15 s, the wait's bound (the first attempt and its 1-s retry); the webhooks benchmark measures delivery latency.
      const [first, second] = await eventually(() => (listener.deliveries.length >= 2 ? listener.deliveries : undefined), 15_000);
      expect(first).toMatchObject({ verified: true, type: 'score.updated', data: { clientId: credential.clientId, score: 77 } });
      expect(second).toMatchObject({ verified: true, type: 'score.updated' });
      expect(second?.id).toBe(first?.id);
      expect(second?.data).not.toHaveProperty('pillarScores');

      const revoked = await request(`${product.urls.credentials}/v1/organizations/${ORG}/authorizations/${credential.clientId}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(revoked.status).toBe(200);
      const ended = await eventually(() => listener.deliveries.find((delivery) => delivery.type === 'authorization.ended'));
      expect(ended).toMatchObject({ verified: true, data: { clientId: credential.clientId, reason: 'revoked' } });
      await postScore(daysAgo(0), 60);
      await notifierSettled(dataDir);
      expect(listener.deliveries.map((delivery) => delivery.type)).toEqual(['score.updated', 'score.updated', 'authorization.ended']);
    } finally {
      await listener.stop();
    }
    const deliveries = await rsd(['webhooks', 'deliveries', '--client-id', credential.clientId, '--id', subscription.id], {
      RSD_API_KEY: credential.apiKey,
    });
    // The credential is revoked: its webhooks answer as the read API would.
    expect(deliveries.code).toBe(1);
    expect(deliveries.stderr).toContain('CREDENTIAL_INACTIVE');
  }, 60_000);

  test('when a credential has used its 120 requests a minute on the read API, then its webhook calls get 429 too: one limit', async () => {
    const credential = await createAuthorization(['qr_score']);
    await postScore(daysAgo(2), 70);
    for (let n = 0; n < 120; n += 1) {
      const read = await request(`${product.urls.readApi}/v1/customers/${credential.clientId}/score`, {
        headers: { 'x-api-key': credential.apiKey },
      });
      expect(read.status).toBe(200);
    }

    const listed = await request(`${product.urls.notifier}/v1/customers/${credential.clientId}/webhooks`, {
      headers: { 'x-api-key': credential.apiKey },
    });

    expect(listed.status).toBe(429);
    expect(Number(listed.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test('when the product is killed (SIGKILL) while a delivery waits for its retry, then after a restart it arrives, once, with the same webhook-id', async () => {
    const credential = await createAuthorization(['qr_score']);
    const port = await freePort();
    const created = await rsd(
      ['webhooks', 'create', '--client-id', credential.clientId, '--url', `http://127.0.0.1:${port}/hooks`, '--events', 'score.updated'],
      { RSD_API_KEY: credential.apiKey },
    );
    const subscription = JSON.parse(created.stdout) as { secret: string };
    const listener = await listenOn(port, subscription.secret, 1);
    try {
      // A recalculation of the latest date: the latest score changes (an older date would not be news).
      await postScore(daysAgo(0), 66);
      await eventually(() => (listener.deliveries.length === 1 ? true : undefined));

      await product.kill();
      product = await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });

      const [first, retried] = await eventually(() => (listener.deliveries.length >= 2 ? listener.deliveries : undefined), 20_000);
      await notifierSettled(dataDir);
      expect(listener.deliveries).toHaveLength(2);
      expect(retried).toMatchObject({ verified: true, type: 'score.updated', data: { clientId: credential.clientId, score: 66 } });
      expect(retried?.id).toBe(first?.id);
    } finally {
      await listener.stop();
    }
  }, 60_000);

  test('when the run is over, then no API key or webhook secret appears in any log or file', async () => {
    const credential = await createAuthorization(['qr_score']);
    const created = await rsd(
      ['webhooks', 'create', '--client-id', credential.clientId, '--url', 'http://127.0.0.1:9/x', '--events', 'score.updated'],
      {
        RSD_API_KEY: credential.apiKey,
      },
    );
    const { secret } = JSON.parse(created.stdout) as { secret: string };
    const files = (await readdir(dataDir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    const haystacks = [
      product.output(),
      ...(await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')))),
    ];
    for (const needle of [...issued, secret, secret.slice('whsec_'.length)]) {
      for (const haystack of haystacks) expect(haystack.includes(needle)).toBe(false);
    }
  });
});

/** `rsd webhooks listen` as a process; its JSON lines are the deliveries it verified (or not). */
async function listenOn(port: number, secret: string, fail: number) {
  const child: ChildProcess = spawn(
    'node',
    [join(REPO_ROOT, 'tools/cli/bin/rsd.js'), 'webhooks', 'listen', '--port', String(port), '--fail', String(fail)],
    { env: { ...process.env, RSD_WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const deliveries: Delivery[] = [];
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) deliveries.push(JSON.parse(line) as Delivery);
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  await eventually(() => (errors.includes(String(port)) ? true : undefined));
  return {
    deliveries,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      }),
  };
}
