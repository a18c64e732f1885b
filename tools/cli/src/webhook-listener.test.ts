import { newWebhookSecret, webhookHeaders, WEBHOOK_HEADERS } from '@rsd/platform';
import { startWebhookListener, type ReceivedDelivery, type WebhookListener, type WebhookListenerOptions } from './webhook-listener';

const NOW = new Date('2026-11-21T08:00:00.000Z');
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);
const SECRET = newWebhookSecret();
const MESSAGE_ID = 'msg_2KWPBgLlAfxdpx2AI54pPJ85';
const PAYLOAD = {
  type: 'grade.changed',
  timestamp: '2026-11-21T07:59:58.000Z',
  data: { clientId: 'rs_3kTMd9Qx7LwZp2VnB8cY1fRe', scoreDate: '2026-11-20', from: 'Improve', to: 'Sustain' },
};
const BODY = JSON.stringify(PAYLOAD);

let listener: WebhookListener | undefined;
let deliveries: ReceivedDelivery[];

async function start(options: Partial<WebhookListenerOptions> = {}): Promise<WebhookListener> {
  deliveries = [];
  listener = await startWebhookListener({
    port: 0,
    host: '127.0.0.1',
    secret: SECRET,
    clock: () => NOW,
    onDelivery: (delivery) => deliveries.push(delivery),
    ...options,
  });
  return listener;
}

afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

/** Posts a delivery as the notifier would; never throws on status. */
async function deliver(
  url: string,
  { body = BODY, headers = signed(BODY), path = '' }: { body?: string; headers?: Record<string, string>; path?: string } = {},
) {
  const response = await fetch(new URL(path, url), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, text: await response.text() };
}

function signed(body: string, { secret = SECRET, timestamp = NOW_SECONDS } = {}): Record<string, string> {
  return webhookHeaders({ id: MESSAGE_ID, timestamp, body, secret });
}

describe('the webhook listener', () => {
  test('when a signed delivery arrives, then it answers 204 and reports it verified with its id, timestamp, type and data', async () => {
    const { url } = await start();

    const answer = await deliver(url);

    expect(answer).toEqual({ status: 204, text: '' });
    expect(deliveries).toEqual([{ verified: true, id: MESSAGE_ID, timestamp: PAYLOAD.timestamp, type: PAYLOAD.type, data: PAYLOAD.data }]);
  });

  test('when a delivery arrives on any path, then it is received the same way', async () => {
    const { url } = await start();

    const answer = await deliver(url, { path: '/hooks/resilience?source=rsd' });

    expect(answer.status).toBe(204);
    expect(deliveries).toEqual([expect.objectContaining({ verified: true, id: MESSAGE_ID })]);
  });

  test('when the body was changed after signing, then it answers 401 and reports it not verified, with the reason', async () => {
    const { url } = await start();
    const tampered = BODY.replace('"to":"Sustain"', '"to":"Adapt"');

    const answer = await deliver(url, { body: tampered, headers: signed(BODY) });

    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text)).toEqual(expect.objectContaining({ message: 'The delivery does not verify with this secret' }));
    expect(deliveries).toEqual([
      {
        verified: false,
        id: MESSAGE_ID,
        timestamp: PAYLOAD.timestamp,
        type: PAYLOAD.type,
        data: { ...PAYLOAD.data, to: 'Adapt' },
        reason: 'no-matching-signature',
      },
    ]);
  });

  test('when a delivery is signed with another secret, then it answers 401', async () => {
    const { url } = await start();

    const answer = await deliver(url, { headers: signed(BODY, { secret: newWebhookSecret() }) });

    expect(answer.status).toBe(401);
    expect(deliveries).toEqual([expect.objectContaining({ verified: false, reason: 'no-matching-signature' })]);
  });

  test('when a delivery has no signature headers, then it answers 401 for a missing header', async () => {
    const { url } = await start();

    const answer = await deliver(url, { headers: {} });

    expect(answer.status).toBe(401);
    expect(deliveries).toEqual([expect.objectContaining({ verified: false, reason: 'missing-header' })]);
    expect(deliveries[0]).not.toHaveProperty('id');
  });

  test('when a signed delivery is older than the tolerance, then it answers 401 for its timestamp', async () => {
    const { url } = await start();

    const answer = await deliver(url, { headers: signed(BODY, { timestamp: NOW_SECONDS - 10 * 60 }) });

    expect(answer.status).toBe(401);
    expect(deliveries).toEqual([expect.objectContaining({ verified: false, reason: 'timestamp-outside-tolerance' })]);
  });

  test('when --fail 2 is given, then the first two deliveries are answered 500 and the retry after them 204', async () => {
    const { url } = await start({ failFirst: 2 });

    const statuses = [(await deliver(url)).status, (await deliver(url)).status, (await deliver(url)).status];

    expect(statuses).toEqual([500, 500, 204]);
    expect(deliveries.map(({ verified, id, answered }) => ({ verified, id, answered }))).toEqual([
      { verified: true, id: MESSAGE_ID, answered: 500 },
      { verified: true, id: MESSAGE_ID, answered: 500 },
      { verified: true, id: MESSAGE_ID, answered: undefined },
    ]);
  });

  test('when --fail is given, then a delivery that does not verify counts among the first too', async () => {
    const { url } = await start({ failFirst: 1 });

    const statuses = [(await deliver(url, { headers: {} })).status, (await deliver(url, { headers: {} })).status];

    expect(statuses).toEqual([500, 401]);
    expect(deliveries[0]).toEqual(expect.objectContaining({ verified: false, reason: 'missing-header', answered: 500 }));
  });

  test('when a body declares more than the cap, then it answers 413 without reading it and reports it', async () => {
    const { url } = await start({ maxBodyBytes: 64 });

    const answer = await deliver(url, { body: 'x'.repeat(1000) });

    expect(answer.status).toBe(413);
    expect(deliveries).toEqual([{ verified: false, id: MESSAGE_ID, reason: 'body-too-large' }]);
  });

  test('when a body without a length grows past the cap, then it answers 413', async () => {
    const { url } = await start({ maxBodyBytes: 64 });
    const chunks = ['x'.repeat(50), 'x'.repeat(50)].map((chunk) => new TextEncoder().encode(chunk));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        chunks.forEach((chunk) => controller.enqueue(chunk));
        controller.close();
      },
    });

    const response = await fetch(url, { method: 'POST', body, duplex: 'half' });

    expect(response.status).toBe(413);
    expect(deliveries).toEqual([{ verified: false, reason: 'body-too-large' }]);
  });

  test('when a body is exactly at the cap, then it is read and verified', async () => {
    const body = JSON.stringify({ ...PAYLOAD, pad: '' });
    const { url } = await start({ maxBodyBytes: Buffer.byteLength(body) });

    expect((await deliver(url, { body, headers: signed(body) })).status).toBe(204);
  });

  test('when a signed body is not a delivery as decision 27 describes it, then it is accepted and the problem reported', async () => {
    const { url } = await start();
    const body = JSON.stringify({ type: 'score.deleted', timestamp: PAYLOAD.timestamp, data: {} });

    const answer = await deliver(url, { body, headers: signed(body) });

    expect(answer.status).toBe(204);
    expect(deliveries).toEqual([
      expect.objectContaining({ verified: true, type: 'score.deleted', payloadError: expect.stringContaining('type') }),
    ]);
  });

  test('when a signed body is not JSON, then it is reported verified without type or data', async () => {
    const { url } = await start();

    const answer = await deliver(url, { body: 'not json', headers: signed('not json') });

    expect(answer.status).toBe(204);
    expect(deliveries).toEqual([{ verified: true, id: MESSAGE_ID, payloadError: expect.any(String) }]);
  });

  test('when a GET arrives, then it answers 405 and reports no delivery', async () => {
    const { url } = await start();

    const response = await fetch(url);

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(deliveries).toEqual([]);
  });

  test('when the secret is not a webhook secret, then the listener does not start', async () => {
    await expect(start({ secret: 'whsec_short' })).rejects.toThrow(/^not a webhook secret/);
  });

  test('when it is closed, then it no longer accepts deliveries', async () => {
    const { url, close } = await start();

    await close();

    await expect(fetch(url, { method: 'POST', headers: { [WEBHOOK_HEADERS.id]: MESSAGE_ID }, body: BODY })).rejects.toThrow();
  });
});
