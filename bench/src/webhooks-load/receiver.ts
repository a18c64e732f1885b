import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the receiver knows of subscription `index` once it is made: whose deliveries to expect, and the key to check them. */
export interface Expected {
  clientId: string;
  /** `whsec_` and the base64 of the key bytes. */
  secret: string;
}

export interface ReceiverTally {
  /** Requests answered, every one included. */
  requests: number;
  /** Organizations that had their delivery (the first per organization counts). */
  delivered: number;
  /** A `webhook-id` seen before: the same message sent twice. */
  duplicateIds: number;
  /** A second message (another id) for an organization that already had one. */
  extraPerOrganization: number;
  /** Missing headers, an unknown path, a body that is not the expected `score.updated` for that subscription. */
  malformed: number;
  signaturesChecked: number;
  signaturesBad: number;
  /** performance.now() of the first and the last request. */
  firstAt: number | undefined;
  lastAt: number | undefined;
}

export interface Receiver {
  /** `http://127.0.0.1:<port>/hooks/`: subscription `index` posts to this followed by its index. */
  baseUrl: string;
  expect(index: number, expected: Expected): void;
  tally(): ReceiverTally;
  /** performance.now() when subscription `index` first had its delivery; NaN while it has not. */
  receivedAt: Float64Array;
  /** Resolves once every one of `count` subscriptions has had its delivery, or `timeoutMs` passed (false then). */
  allDelivered(count: number, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Standard Webhooks' default tolerance for the timestamp, either side. */
const TOLERANCE_S = 300;
const PATH = /^\/hooks\/(\d+)$/;

/**
 * A recipient on loopback, in the bench's own process: answers 204 to everything (so nothing is
 * retried and the drain measures first attempts), counts, and checks what it can cheaply: each
 * `webhook-id` once, each organization once, each body for its own subscription, and the
 * signature of one delivery in `verifyEvery` per Standard Webhooks with node:crypto alone.
 */
export async function startReceiver(size: number, verifyEvery: number): Promise<Receiver> {
  const expected: (Expected & { key: Buffer })[] = [];
  const receivedAt = new Float64Array(size).fill(NaN);
  const ids = new Set<string>();
  const tally: ReceiverTally = {
    requests: 0,
    delivered: 0,
    duplicateIds: 0,
    extraPerOrganization: 0,
    malformed: 0,
    signaturesChecked: 0,
    signaturesBad: 0,
    firstAt: undefined,
    lastAt: undefined,
  };
  let waiter: { count: number; done(): void } | undefined;

  function received(req: IncomingMessage, body: Buffer, at: number): void {
    tally.requests += 1;
    tally.firstAt ??= at;
    tally.lastAt = at;
    const id = header(req, 'webhook-id');
    const index = Number(PATH.exec(req.url ?? '')?.[1] ?? NaN);
    const subscription = expected[index];
    if (!id || !subscription) {
      tally.malformed += 1;
      return;
    }
    if (ids.has(id)) tally.duplicateIds += 1;
    ids.add(id);
    if (!isScoreUpdatedFor(body, subscription.clientId)) tally.malformed += 1;
    if (tally.requests % verifyEvery === 0) {
      tally.signaturesChecked += 1;
      if (!signatureVerifies(req, id, body, subscription.key, at)) tally.signaturesBad += 1;
    }
    if (Number.isNaN(receivedAt[index]!)) {
      receivedAt[index] = at;
      tally.delivered += 1;
      if (waiter && tally.delivered >= waiter.count) waiter.done();
    } else {
      tally.extraPerOrganization += 1;
    }
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received(req, Buffer.concat(chunks), performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/hooks/`,
    expect(index, subscription) {
      expected[index] = { ...subscription, key: Buffer.from(subscription.secret.slice('whsec_'.length), 'base64') };
    },
    tally: () => ({ ...tally }),
    receivedAt,
    allDelivered(count, timeoutMs) {
      if (tally.delivered >= count) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiter = undefined;
          resolve(false);
        }, timeoutMs);
        waiter = {
          count,
          done: () => {
            clearTimeout(timer);
            waiter = undefined;
            resolve(true);
          },
        };
      });
    },
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function isScoreUpdatedFor(body: Buffer, clientId: string): boolean {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { type?: unknown; data?: { clientId?: unknown; score?: unknown } };
    return parsed.type === 'score.updated' && parsed.data?.clientId === clientId && typeof parsed.data.score === 'number';
  } catch {
    return false;
  }
}

/** `v1,<base64 HMAC-SHA256 over "{id}.{timestamp}.{body}">` among the space-separated signatures, the timestamp within tolerance. */
function signatureVerifies(req: IncomingMessage, id: string, body: Buffer, key: Buffer, at: number): boolean {
  const timestamp = header(req, 'webhook-timestamp');
  const signatures = header(req, 'webhook-signature');
  if (!timestamp || !/^\d+$/.test(timestamp) || !signatures) return false;
  const nowS = (performance.timeOrigin + at) / 1000;
  if (Math.abs(nowS - Number(timestamp)) > TOLERANCE_S) return false;
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64'));
  return signatures.split(' ').some((candidate) => {
    const [version, signature] = candidate.split(',', 2);
    const presented = Buffer.from(signature ?? '');
    return version === 'v1' && presented.length === expected.length && timingSafeEqual(presented, expected);
  });
}
