import { aScoreSubmission } from '@rsd/testkit';
import { eventually, notifierSettled, runRsd, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';
import { startSwitchableReceiver, verifiesWith, type Received, type SwitchableReceiver } from '../support/webhook-lifecycle';

// A grant's webhook taken through its whole lifecycle with the real `rsd` bin against the embedded
// product: update (URL and conditions), pause, enable, rotate-secret, test and redeliver, received by a
// receiver this test starts on loopback, every signature checked with the official Standard Webhooks
// library.

const ORG = 'cli-lifecycle-org';

let dataDir: string;
let product: EmbeddedProcess;
let token: string;
const receivers: SwitchableReceiver[] = [];

beforeAll(async () => {
  // Receivers on loopback, so the development flag of decision 28.
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-cli-lifecycle-', {
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // A grant's first read reaches the alerts within a moment.
    ACCESS_LOG_FLUSH_INTERVAL_MS: '200',
  }));
  token = await devTokenFor(dataDir, ORG);
}, 90_000);

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await stopAndRemove(product, dataDir);
});

/** The real `rsd` bin (its token minted from the data directory's development secret); never throws. */
function rsd(args: string[], apiKey = '') {
  return runRsd(args, { DATA_DIR: dataDir, RSD_NOTIFIER_URL: product.urls.notifier, RSD_API_KEY: apiKey });
}

async function receiver(): Promise<SwitchableReceiver> {
  const started = await startSwitchableReceiver('127.0.0.1');
  receivers.push(started);
  return started;
}

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
const until = <T>(check: () => T | undefined, timeoutMs = 15_000) => eventually(() => Promise.resolve(check()), timeoutMs, 25);
/** Everything posted so far handled and attempted: what was not sent by then never will be. */
const settle = () => notifierSettled(dataDir);
const scoreOf = (delivery: Received) => (JSON.parse(delivery.body) as { data: { score?: number } }).data.score;
const typeOf = (delivery: Received) => (JSON.parse(delivery.body) as { type: string }).type;

describe('rsd webhooks: the lifecycle against the embedded runtime', () => {
  test('when a webhook is updated, paused, enabled, rotated, tested and redelivered with rsd, then the receiver sees each step', async () => {
    const credential = await orgAdmin.createAuthorization(product.urls.credentials, ORG, token, {
      recipientType: 'insurance_provider',
      scopes: ['qr_score'],
    });
    const postScore = (scoreDate: string, score: number) =>
      orgAdmin.postScore(product.urls.scoreIngest, token, aScoreSubmission({ organizationId: ORG, scoreDate, score }));
    const cli = (...args: string[]) => rsd([...args, '--client-id', credential.clientId], credential.apiKey);
    const first = await receiver();
    const second = await receiver();

    const created = await cli('webhooks', 'create', '--url', first.url, '--events', 'score.updated');
    expect(created.code).toBe(0);
    const webhook = JSON.parse(created.stdout) as { id: string; secret: string; conditions: unknown };
    expect(webhook.conditions).toEqual({});

    // update: another URL, and only scores below 50.
    const updated = await cli('webhooks', 'update', '--id', webhook.id, '--url', second.url, '--score-below', '50');
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ id: webhook.id, url: second.url, status: 'active', conditions: { scoreBelow: 50 } });
    await postScore(daysAgo(5), 72);
    await postScore(daysAgo(4), 40);
    const below = await until(() => second.received[0]);
    expect(scoreOf(below)).toBe(40);
    expect(verifiesWith(below, webhook.secret)).toBe(true);
    await settle();
    expect(second.received.map(scoreOf)).toEqual([40]);
    expect(first.received).toEqual([]);

    // pause: a change below 50 reaches no one; enable: the next one does, not the one missed.
    const paused = await cli('webhooks', 'pause', '--id', webhook.id);
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ status: 'paused' });
    expect(paused.stderr).toContain('paused');
    await postScore(daysAgo(3), 30);
    await settle();
    expect(second.received).toHaveLength(1);
    const enabled = await cli('webhooks', 'enable', '--id', webhook.id);
    expect(enabled.code).toBe(0);
    expect(JSON.parse(enabled.stdout)).toMatchObject({ status: 'active' });
    await postScore(daysAgo(2), 20);
    const resumed = await until(() => second.received[1]);
    expect(scoreOf(resumed)).toBe(20);
    await settle();
    expect(second.received.map(scoreOf)).toEqual([40, 20]);

    // rotate-secret with an overlap, then a test delivery: signed with both secrets, each verifying.
    const rotated = await cli('webhooks', 'rotate-secret', '--id', webhook.id, '--overlap', '1h', '--env');
    expect(rotated.code).toBe(0);
    expect(rotated.stderr).toContain('shown only this once');
    const newSecret = /^export RSD_WEBHOOK_SECRET='(whsec_[A-Za-z0-9+/=]+)'$/.exec(rotated.stdout.trim())?.[1] ?? '';
    expect(newSecret).not.toBe(webhook.secret);
    expect(newSecret).toMatch(/^whsec_/);
    const tested = await cli('webhooks', 'test', '--id', webhook.id);
    expect(tested.code).toBe(0);
    const { messageId } = JSON.parse(tested.stdout) as { messageId: string };
    const test = await until(() => second.received.find((delivery) => delivery.headers['webhook-id'] === messageId));
    expect(typeOf(test)).toBe('webhook.test');
    expect(String(test.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiesWith(test, newSecret)).toBe(true);
    expect(verifiesWith(test, webhook.secret)).toBe(true);

    // redeliver the test delivery as the deliveries list names it: the same webhook-id and body.
    const listed = await eventually(async () => {
      const answer = await cli('webhooks', 'deliveries', '--id', webhook.id);
      const attempts = (JSON.parse(answer.stdout) as { deliveries: { messageId: string }[] }).deliveries;
      return attempts.some((attempt) => attempt.messageId === messageId) ? attempts : undefined;
    });
    expect(listed.length).toBeGreaterThanOrEqual(3);
    const received = second.received.length;
    const redelivered = await cli('webhooks', 'redeliver', messageId, '--id', webhook.id);
    expect(redelivered.code).toBe(0);
    expect(JSON.parse(redelivered.stdout)).toEqual({ messageId });
    const again = await until(() => second.received[received]);
    expect(again.headers['webhook-id']).toBe(messageId);
    expect(again.body).toBe(test.body);
    expect(verifiesWith(again, newSecret)).toBe(true);

    // back to every change: a score above 50 is delivered again.
    const everyChange = await cli('webhooks', 'update', '--id', webhook.id, '--every-change');
    expect(JSON.parse(everyChange.stdout)).toMatchObject({ conditions: {} });
    await postScore(daysAgo(1), 90);
    const above = await until(() => second.received.find((delivery) => scoreOf(delivery) === 90));
    expect(verifiesWith(above, newSecret)).toBe(true);

    const unknown = await cli('webhooks', 'redeliver', 'msg_2KWPBgLlAfxdpx2AI54pPJ85', '--id', webhook.id);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^rsd: 404 WEBHOOK_MESSAGE_NOT_FOUND: /);
  }, 90_000);

  test("when an organization's alert webhook is managed with rsd alert-webhooks, then a grant's first read and a test arrive signed", async () => {
    const org = 'cli-alerts-org';
    const hooks = await receiver();
    const cli = (...args: string[]) => rsd([...args, '--org', org]);

    const created = await cli('alert-webhooks', 'create', '--url', hooks.url, '--events', 'authorization.first_use');
    expect(created.code).toBe(0);
    const webhook = JSON.parse(created.stdout) as { id: string; secret: string; events: string[] };
    expect(webhook.events).toEqual(['authorization.first_use']);
    const orgToken = await devTokenFor(dataDir, org);
    await orgAdmin.postScore(
      product.urls.scoreIngest,
      orgToken,
      aScoreSubmission({ organizationId: org, scoreDate: daysAgo(1), score: 64 }),
    );
    const credential = await orgAdmin.createAuthorization(product.urls.credentials, org, orgToken, {
      recipientType: 'auditor',
      scopes: ['qr_score'],
    });
    // The first successful read: once the read API has the grant and the score.
    await eventually(async () => {
      const read = await fetch(`${product.urls.readApi}/v1/customers/${credential.clientId}/score`, {
        headers: { 'x-api-key': credential.apiKey },
      });
      return read.status === 200 ? true : undefined;
    });

    const firstUse = await until(() => hooks.received.find((delivery) => typeOf(delivery) === 'authorization.first_use'));
    expect(JSON.parse(firstUse.body)).toMatchObject({ data: { clientId: credential.clientId } });
    expect(verifiesWith(firstUse, webhook.secret)).toBe(true);

    const paused = await cli('alert-webhooks', 'pause', '--id', webhook.id);
    expect(JSON.parse(paused.stdout)).toMatchObject({ id: webhook.id, status: 'paused' });
    const enabled = await cli('alert-webhooks', 'enable', '--id', webhook.id);
    expect(JSON.parse(enabled.stdout)).toMatchObject({ status: 'active' });
    const tested = await cli('alert-webhooks', 'test', '--id', webhook.id);
    const { messageId } = JSON.parse(tested.stdout) as { messageId: string };
    const test = await until(() => hooks.received.find((delivery) => delivery.headers['webhook-id'] === messageId));
    expect(typeOf(test)).toBe('webhook.test');
    expect(verifiesWith(test, webhook.secret)).toBe(true);

    const listed = await cli('alert-webhooks', 'list');
    expect(JSON.parse(listed.stdout)).toMatchObject({ webhooks: [{ id: webhook.id, status: 'active' }] });
    const refused = await cli('alert-webhooks', 'create', '--url', hooks.url, '--events', 'score.updated');
    expect(refused.code).toBe(2);
    expect((await cli('alert-webhooks', 'delete', '--id', webhook.id)).code).toBe(0);
    expect(JSON.parse((await cli('alert-webhooks', 'list')).stdout)).toEqual({ webhooks: [] });
  }, 60_000);
});
