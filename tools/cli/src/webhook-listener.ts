import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { webhookPayloadSchema } from '@rsd/contracts';
import {
  closeServer,
  errorBody,
  listen,
  portOf,
  signWebhook,
  verifyWebhook,
  WEBHOOK_HEADERS,
  type WebhookVerification,
} from '@rsd/platform';

/** A delivery is a small JSON document: anything far larger is refused unread. */
export const MAX_DELIVERY_BYTES = 1024 * 1024;

export type RefusalReason = Extract<WebhookVerification, { outcome: 'refused' }>['reason'] | 'body-too-large';

/** What `rsd webhooks listen` prints, one JSON line per delivery. */
export interface ReceivedDelivery {
  verified: boolean;
  /** The `webhook-id` header: the same on every retry of one event. */
  id?: string;
  /** From the body, `{ type, timestamp, data }`, whether or not it verified (then for diagnosis only). */
  timestamp?: unknown;
  type?: unknown;
  data?: unknown;
  reason?: RefusalReason;
  /** Verified, but not a delivery as decision 27 describes it. */
  payloadError?: string;
  /** Only when `--fail` made the answer a 500. */
  answered?: 500;
}

export interface WebhookListenerOptions {
  port: number;
  host: string;
  secret: string;
  /** The first this many deliveries are answered 500, whatever they hold, so that the sender's retries show. */
  failFirst?: number;
  maxBodyBytes?: number;
  clock?: () => Date;
  onDelivery: (delivery: ReceivedDelivery) => void;
}

export interface WebhookListener {
  url: string;
  close: () => Promise<void>;
}

/** Throws on a secret that is not `whsec_` and the base64 of 24 to 64 bytes, without echoing it. */
export function assertWebhookSecret(secret: string): void {
  // Signing checks the secret first; the id and timestamp here are valid.
  signWebhook({ id: 'probe', timestamp: 0, body: '', secret });
}

/** A receiver for trying webhooks out: any path takes a POST; each is verified, reported and answered. */
export async function startWebhookListener(options: WebhookListenerOptions): Promise<WebhookListener> {
  assertWebhookSecret(options.secret);
  const maxBodyBytes = options.maxBodyBytes ?? MAX_DELIVERY_BYTES;
  const clock = options.clock ?? (() => new Date());
  let toFail = options.failFirst ?? 0;

  const answer = (response: ServerResponse, status: number, message?: string) => {
    if (message === undefined) {
      response.writeHead(status).end();
      return;
    }
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(errorBody(status, undefined, message, { now: clock() })));
  };

  const receive = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      answer(response, 405, 'Deliveries are POST requests');
      return;
    }
    const id = headerOf(request, WEBHOOK_HEADERS.id);
    const body = await readCapped(request, maxBodyBytes);
    if (body === undefined) {
      options.onDelivery({ verified: false, ...(id !== undefined ? { id } : {}), reason: 'body-too-large' });
      // The rest of the body is not read: the connection goes with the answer.
      response.setHeader('connection', 'close');
      answer(response, 413, `A delivery must not exceed ${maxBodyBytes} bytes`);
      return;
    }
    const verification = verifyWebhook(
      {
        id,
        timestamp: headerOf(request, WEBHOOK_HEADERS.timestamp),
        signature: headerOf(request, WEBHOOK_HEADERS.signature),
        body,
      },
      options.secret,
      { now: clock() },
    );
    const delivery = describe(id, body, verification);
    if (toFail > 0) {
      toFail -= 1;
      options.onDelivery({ ...delivery, answered: 500 });
      answer(response, 500, 'Failing on purpose (--fail)');
      return;
    }
    options.onDelivery(delivery);
    if (delivery.verified) answer(response, 204);
    else answer(response, 401, 'The delivery does not verify with this secret');
  };

  const server: Server = await listen(
    (request, response) => {
      receive(request, response).catch(() => {
        if (!response.headersSent) answer(response, 400, 'The delivery could not be read');
        else response.destroy();
      });
    },
    options.port,
    options.host,
  );
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return { url: `http://${host}:${portOf(server)}/`, close: () => closeServer(server) };
}

function describe(id: string | undefined, body: Buffer, verification: WebhookVerification): ReceivedDelivery {
  const json = parseJson(body.toString('utf8'));
  const fields = typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  const delivery: ReceivedDelivery = {
    verified: verification.outcome === 'verified',
    ...(id !== undefined ? { id } : {}),
    ...('timestamp' in fields ? { timestamp: fields.timestamp } : {}),
    ...('type' in fields ? { type: fields.type } : {}),
    ...('data' in fields ? { data: fields.data } : {}),
  };
  if (verification.outcome === 'refused') return { ...delivery, reason: verification.reason };
  const payload = webhookPayloadSchema.safeParse(json);
  if (payload.success) return delivery;
  const problems = payload.error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  return { ...delivery, payloadError: problems.join('; ') };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The body, or undefined as soon as it is known to exceed the cap (then it is not read further). */
function readCapped(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        request.off('data', onData);
        request.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}
