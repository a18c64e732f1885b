import { signDevToken } from '@rsd/platform';
import { forEachLimited, requestJson } from './http';
import type { ProductUrls } from './product';
import type { Receiver } from './receiver';

export interface Subscriber {
  organizationId: string;
  clientId: string;
  webhookId: string;
}

export interface SetupFigures {
  subscribers: Subscriber[];
  seconds: number;
  /** Per create, ms: POST …/authorizations (token minted beforehand) and POST …/webhooks. */
  authorizationMs: number[];
  webhookMs: number[];
  /** Webhook creates refused at first (the notifier had not yet seen the authorization) and tried again. */
  webhookRetries: number;
}

/** Up to 10 s: the distributed runtime's notifier learns of an authorization from the event log. */
const RETRIES = 50;
const RETRY_AFTER_MS = 200;

/** Organization `index` of this run: distinct from any other run's on the same data directory. */
export const organizationIdOf = (run: string, index: number) => `whl-${run}-${index}`;

/**
 * What an administrator and a recipient do, `count` times over, `concurrency` at a time: the
 * administrator (a token naming the organization, decision 34: the credentials API acts for the
 * organization in the token only) creates a qr_score authorization; the recipient, with its key,
 * subscribes to score.updated at the receiver.
 */
export async function subscribeAll(
  urls: ProductUrls,
  devSecret: string,
  receiver: Receiver,
  options: {
    run: string;
    count: number;
    concurrency: number;
    onProgress(done: number): void;
    /** Subscriptions per organization (1 unless given): one score of the organization is then a delivery to each. */
    perOrganization?: number;
  },
): Promise<SetupFigures> {
  const subscribers: Subscriber[] = new Array<Subscriber>(options.count);
  const authorizationMs: number[] = [];
  const webhookMs: number[] = [];
  let webhookRetries = 0;
  let done = 0;
  const started = performance.now();

  await forEachLimited(options.count, options.concurrency, async (index) => {
    const organizationId = organizationIdOf(options.run, Math.floor(index / (options.perOrganization ?? 1)));
    const token = await signDevToken(devSecret, { org: organizationId, scope: 'authorizations:write' });
    let at = performance.now();
    const authorization = await requestJson<{ clientId: string; apiKey: string }>(
      `${urls.credentials}/v1/organizations/${organizationId}/authorizations`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ recipientType: 'insurance_provider', recipientName: `Webhook load ${index}`, scopes: ['qr_score'] }),
      },
    );
    authorizationMs.push(performance.now() - at);
    if (authorization.status !== 201)
      throw new Error(`authorization ${index}: ${authorization.status} ${JSON.stringify(authorization.body)}`);
    const { clientId, apiKey } = authorization.body;

    for (let attempt = 0; ; attempt += 1) {
      at = performance.now();
      const webhook = await requestJson<{ id: string; secret: string }>(`${urls.notifier}/v1/customers/${clientId}/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey },
        body: JSON.stringify({ url: `${receiver.baseUrl}${index}`, events: ['score.updated'] }),
      });
      webhookMs.push(performance.now() - at);
      // The notifier has not seen the authorization yet: 401 on the embedded runtime, 404 CREDENTIAL_NOT_FOUND on the distributed one.
      const notYetSeen =
        webhook.status === 401 || (webhook.status === 404 && (webhook.body as { code?: string }).code === 'CREDENTIAL_NOT_FOUND');
      if (notYetSeen && attempt < RETRIES) {
        webhookRetries += 1;
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS));
        continue;
      }
      if (webhook.status !== 201) throw new Error(`webhook ${index}: ${webhook.status} ${JSON.stringify(webhook.body)}`);
      receiver.expect(index, { clientId, secret: webhook.body.secret });
      subscribers[index] = { organizationId, clientId, webhookId: webhook.body.id };
      break;
    }
    options.onProgress((done += 1));
  });

  return { subscribers, seconds: (performance.now() - started) / 1000, authorizationMs, webhookMs, webhookRetries };
}
