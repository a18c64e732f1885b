import { errorFor } from './errors.js';
import type { Received, RequestOptions, Transport } from './transport.js';
import type { CreatedWebhook, Webhook, WebhookConditions, WebhookDelivery, WebhookEvent } from './types.js';

/** One request under a webhooks collection: the path after `…/webhooks`, '' for the collection itself. */
interface WebhookCall {
  method: string;
  path: string;
  body?: unknown;
  /** Whether sending it twice does no more than sending it once (see Transport). */
  idempotent: boolean;
}

/** Where an owner's webhooks are and how its requests are authenticated; each function is asked at every call. */
export interface WebhooksOwner {
  transport: Transport;
  /** The collection's URL (`{notifierUrl}/customers/{clientId}/webhooks`, …); throws TypeError when it cannot be made. */
  collection(): string;
  /** The credential's headers: `x-api-key` or `authorization`. */
  headers(): Record<string, string>;
}

/**
 * @internal An owner's webhooks whose collection is `collection(notifierRoot)`: each call throws TypeError while
 * the notifierUrl option (`notifierRoot`) is not given.
 */
export function webhooksAt<Event extends string = WebhookEvent>(
  transport: Transport,
  notifierRoot: string | undefined,
  collection: (notifierRoot: string) => string,
  headers: () => Record<string, string>,
): Webhooks<Event> {
  return new Webhooks<Event>({
    transport,
    collection: () => {
      if (notifierRoot === undefined) throw new TypeError('webhooks need the notifierUrl option');
      return collection(notifierRoot);
    },
    headers,
  });
}

export interface CreateWebhookOptions extends RequestOptions {
  /** Which `score.updated` deliveries it gets (decision 45); absent or `{}`: every change. */
  conditions?: WebhookConditions;
}

/** What `update` changes; what is not given stays. At least one is needed. */
export interface WebhookChange<Event extends string = WebhookEvent> {
  url?: string;
  events?: Event[];
  /** false pauses it; true re-enables one paused, or disabled after a day of failures (deliveries resume from then). */
  enabled?: boolean;
  /** Replaces the conditions as a whole; `{}` removes them. */
  conditions?: WebhookConditions;
}

/**
 * The whole lifecycle of one owner's webhooks on the notifier (decisions 26 and 45): a grant's
 * (`client.webhooks`), a portfolio's (`portfolio.webhooks`) or an organization's (`organization.webhooks`).
 * The same class for each, on the owner's collection and credential.
 */
export class Webhooks<Event extends string = WebhookEvent> {
  readonly #owner: WebhooksOwner;

  /** @internal Made by the Client, the Portfolio and the Organization. */
  constructor(owner: WebhooksOwner) {
    this.#owner = owner;
  }

  /**
   * createWebhook: subscribes `url` to `events`. The answer's `secret` is shown only this once; keep it
   * to verify deliveries. Never sent twice on a network failure (it would subscribe twice).
   */
  async create(url: string, events: Event[], options: CreateWebhookOptions = {}): Promise<CreatedWebhook<Event>> {
    const { conditions, ...call } = options;
    const body = { url, events, ...(conditions === undefined ? {} : { conditions }) };
    return this.#json(await this.#send({ method: 'POST', path: '', body, idempotent: false }, call));
  }

  /** listWebhooks, oldest first, without secrets. */
  async list(options: RequestOptions = {}): Promise<Webhook<Event>[]> {
    return this.#json<{ webhooks: Webhook<Event>[] }>(await this.#send({ method: 'GET', path: '', idempotent: true }, options)).webhooks;
  }

  /**
   * updateWebhook (PATCH): changes what is given and answers the webhook as it is now; a change of
   * nothing is refused before it is sent. Repeated after a network failure: it sets values, so sending
   * it again leaves the same webhook.
   */
  async update(id: string, change: WebhookChange<Event>, options: RequestOptions = {}): Promise<Webhook<Event>> {
    if (Object.values(change).every((value) => value === undefined)) {
      throw new TypeError('update needs at least one of url, events, enabled, conditions');
    }
    return this.#json(await this.#send({ method: 'PATCH', path: `/${encodeURIComponent(id)}`, body: change, idempotent: true }, options));
  }

  /** deleteWebhook, with the deliveries it still owed. */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#send({ method: 'DELETE', path: `/${encodeURIComponent(id)}`, idempotent: true }, options);
  }

  /** listWebhookDeliveries: the latest attempts, newest first. */
  async deliveries(id: string, options: RequestOptions = {}): Promise<WebhookDelivery<Event>[]> {
    const received = await this.#send({ method: 'GET', path: `/${encodeURIComponent(id)}/deliveries`, idempotent: true }, options);
    return this.#json<{ deliveries: WebhookDelivery<Event>[] }>(received).deliveries;
  }

  /**
   * rotateWebhookSecret: a new signing secret, shown this once. For `overlapSeconds` (0 to 86,400) each
   * delivery is signed with both, so receivers can change over without missing one. Never sent twice on
   * a network failure: a second rotation would replace the secret the first one answered.
   */
  async rotateSecret(id: string, request: { overlapSeconds: number }, options: RequestOptions = {}): Promise<string> {
    const path = `/${encodeURIComponent(id)}/rotate-secret`;
    return this.#json<{ secret: string }>(await this.#send({ method: 'POST', path, body: request, idempotent: false }, options)).secret;
  }

  /**
   * testWebhook: queues a `webhook.test` delivery (202) and answers its `messageId`, the `webhook-id`
   * the receiver will get. Never sent twice on a network failure (it would send a second test).
   */
  async test(id: string, options: RequestOptions = {}): Promise<string> {
    const path = `/${encodeURIComponent(id)}/test`;
    return this.#json<{ messageId: string }>(await this.#send({ method: 'POST', path, idempotent: false }, options)).messageId;
  }

  /**
   * redeliverWebhookDelivery: sends the delivery `messageId` names (as `deliveries` lists it) again, with
   * the same payload and `webhook-id` (202). Repeated after a network failure: a receiver that dedupes
   * on `webhook-id`, as Standard Webhooks asks, sees one delivery however often it comes.
   */
  async redeliver(id: string, messageId: string, options: RequestOptions = {}): Promise<string> {
    const path = `/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(messageId)}/redeliver`;
    return this.#json<{ messageId: string }>(await this.#send({ method: 'POST', path, idempotent: true }, options)).messageId;
  }

  async #send(outgoing: WebhookCall, call: RequestOptions): Promise<Received> {
    const owner = this.#owner;
    const { body } = outgoing;
    const received = await owner.transport.send(
      {
        method: outgoing.method,
        url: `${owner.collection()}${outgoing.path}`,
        headers: { ...owner.headers(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        idempotent: outgoing.idempotent,
      },
      call,
    );
    if (received.status < 200 || received.status > 299) throw errorFor(received.status, received.headers, received.body);
    return received;
  }

  #json<T>(received: Received): T {
    return JSON.parse(new TextDecoder().decode(received.body)) as T;
  }
}
