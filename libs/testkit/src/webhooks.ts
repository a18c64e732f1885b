import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  /** performance.now() when it arrived. */
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** From now on, answers each delivery this long after it arrived (it is kept on arrival): attempts stay in flight. */
  slowDown(ms: number): void;
  close(): Promise<void>;
}

/** A recipient's endpoint on `host`: answers 500 to the first `failures` deliveries, then 204, and keeps each one. */
export async function startWebhookReceiver(failures = 0, host = '127.0.0.1'): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  let toFail = failures;
  let answerAfterMs = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answered = toFail > 0 ? 500 : 204;
      if (toFail > 0) toFail -= 1;
      received.push({ at: performance.now(), headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
      const answer = () => res.writeHead(answered).end();
      if (answerAfterMs > 0) setTimeout(answer, answerAfterMs);
      else answer();
    });
  });
  await new Promise<void>((done) => server.listen(0, host, done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/hooks`,
    received,
    slowDown: (ms) => {
      answerAfterMs = ms;
    },
    close: () =>
      new Promise<void>((done) => {
        // An answer still delayed, or a sender gone (killed) mid-request, must not hold the close.
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/**
 * Standard Webhooks, recomputed with node:crypto only, independently of the notifier's signing code:
 * HMAC-SHA256 over "{id}.{timestamp}.{body}" keyed with the bytes the base64 after `whsec_` encodes,
 * compared with every `v1,` signature sent.
 */
export function webhookSignatureVerifies(delivery: Pick<ReceivedDelivery, 'headers' | 'body'>, secret: string): boolean {
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${delivery.body}`)
    .digest('base64');
  return String(delivery.headers['webhook-signature'])
    .split(' ')
    .some((candidate) => candidate === `v1,${expected}`);
}
