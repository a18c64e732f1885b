import type { Request, RequestHandler, Response } from 'express';
import {
  createWebhookRequestSchema,
  MAX_WEBHOOKS_PER_AUTHORIZATION,
  type CreatedWebhook,
  type Webhook,
  type WebhookDeliveryList,
  type WebhookList,
  webhookIdSchema,
} from '@rsd/contracts';
import { checkTargetAddress, checkTargetUrl, generateClientId, scopesAllow, type TargetPolicy } from '@rsd/domain';
import { ApiError, issueDetails, jsonBody, methodNotAllowed, newWebhookSecret, requestErrorMap, validationFailed } from '@rsd/platform';
import type { StoredWebhook, WebhookStore } from '@rsd/ports';
import type { AuthenticatedRecipient, AuthenticationRequest } from '@rsd/recipient-access';
import type { Resolve } from '../delivery/send-webhook';
import type { SecretSealer } from './secret-sealing';

export interface WebhookRoutesDeps {
  store: WebhookStore;
  sealer: SecretSealer;
  policy: TargetPolicy;
  resolve: Resolve;
  authenticate: (req: Request, res: Response, request: AuthenticationRequest) => Promise<AuthenticatedRecipient>;
  clock: { now(): Date };
  attemptsListed: number;
}

/** `/customers/{clientId}/webhooks[/{id}[/deliveries]]`, the Client ID segment as received. */
const WEBHOOK_PATH = /^\/customers\/([^/]*)\/webhooks(?:\/([^/]+)(\/deliveries)?)?\/?$/;

/** A subscription's body is small: a URL and up to three event names. */
const BODY_LIMIT = '16kb';

/**
 * Decision 26: a recipient manages its own subscriptions, authenticated exactly like the read API
 * (the Client ID in the path and `x-api-key`, steps 1–8 with the allow list and the rate limit).
 */
export function webhookRoutes(deps: WebhookRoutesDeps): RequestHandler {
  const { store, clock } = deps;
  const [requireJson, parseJson] = jsonBody(BODY_LIMIT) as [RequestHandler, RequestHandler];
  // After authentication, like every other check: an unknown caller learns nothing about the body it sent.
  const parseBody = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) => {
      const failed = (error: unknown) => reject(error instanceof Error ? error : new Error(String(error)));
      requireJson(req, res, (error?: unknown) =>
        error ? failed(error) : parseJson(req, res, (parseError?: unknown) => (parseError ? failed(parseError) : resolve())),
      );
    });

  async function create(req: Request, res: Response, recipient: AuthenticatedRecipient): Promise<void> {
    await parseBody(req, res);
    const parsed = createWebhookRequestSchema.safeParse(req.body, { error: requestErrorMap });
    if (!parsed.success) throw validationFailed(issueDetails(parsed.error.issues));
    const { url, events } = parsed.data;
    const target = await checkTarget(url, deps);
    const refusedEvents = events.filter((type) => !scopesAllow(type, recipient.credential.scopes));
    if (refusedEvents.length > 0) {
      throw new ApiError('INSUFFICIENT_SCOPE', `This credential's scopes do not allow these events: ${refusedEvents.join(', ')}`);
    }
    const secret = newWebhookSecret();
    const webhook: StoredWebhook = {
      id: generateClientId('wh'),
      clientId: recipient.clientId,
      organizationId: recipient.credential.organizationId,
      url: target,
      events: [...events],
      status: 'active',
      createdAt: clock.now().toISOString(),
      disabledAt: null,
      sealedSecret: deps.sealer.seal(secret),
    };
    if ((await store.addWebhook(webhook, MAX_WEBHOOKS_PER_AUTHORIZATION)) === 'limit-reached') {
      throw new ApiError(
        'WEBHOOK_LIMIT_REACHED',
        `An authorization may have at most ${MAX_WEBHOOKS_PER_AUTHORIZATION} webhooks; delete one first`,
      );
    }
    const created: CreatedWebhook = { ...resourceOf(webhook), secret };
    res.status(201).location(`/v1/customers/${recipient.clientId}/webhooks/${webhook.id}`).json(created);
  }

  async function list(res: Response, recipient: AuthenticatedRecipient): Promise<void> {
    const body: WebhookList = { webhooks: (await store.listWebhooks(recipient.clientId)).map(resourceOf) };
    res.json(body);
  }

  async function remove(res: Response, recipient: AuthenticatedRecipient, id: string): Promise<void> {
    if (!(await store.deleteWebhook(recipient.clientId, id))) throw webhookNotFound();
    res.status(204).end();
  }

  async function deliveries(res: Response, recipient: AuthenticatedRecipient, id: string): Promise<void> {
    if (!(await store.findWebhook(recipient.clientId, id))) throw webhookNotFound();
    const body: WebhookDeliveryList = { deliveries: await store.attempts(id, deps.attemptsListed) };
    res.json(body);
  }

  return async (req, res, next) => {
    const match = WEBHOOK_PATH.exec(req.path);
    if (!match) {
      next();
      return;
    }
    const [, rawClientId, id, deliveriesPath] = match;
    const allowed = id === undefined ? ['GET', 'POST'] : deliveriesPath ? ['GET'] : ['DELETE'];
    res.locals.metricsRoute = `/v1/customers/:clientId/webhooks${id === undefined ? '' : deliveriesPath ? '/:id/deliveries' : '/:id'}`;
    // Subscriptions, secrets and delivery logs are per caller: no shared cache may keep them.
    res.setHeader('Cache-Control', 'no-store');
    if (!allowed.includes(req.method)) {
      methodNotAllowed(allowed)(req, res, next);
      return;
    }
    const recipient = await deps.authenticate(req, res, { rawClientId: rawClientId || undefined });
    // An id that cannot be one is unknown without a lookup: no store sees what a hostile path carries.
    if (id !== undefined && !webhookIdSchema.safeParse(id).success) throw webhookNotFound();
    if (id === undefined) return req.method === 'POST' ? create(req, res, recipient) : list(res, recipient);
    return deliveriesPath ? deliveries(res, recipient, id) : remove(res, recipient, id);
  };
}

function resourceOf(webhook: StoredWebhook): Webhook {
  const { id, url, events, status, createdAt } = webhook;
  return { id, url, events, status, createdAt };
}

const webhookNotFound = () => new ApiError('WEBHOOK_NOT_FOUND', 'This authorization has no webhook with that id');

/** Decision 28 at creation: the URL, then every address its host resolves to now (checked again at each attempt). */
async function checkTarget(url: string, deps: Pick<WebhookRoutesDeps, 'policy' | 'resolve'>): Promise<string> {
  const target = checkTargetUrl(url, deps.policy);
  if (target.outcome === 'refused') throw targetNotAllowed(target.reason);
  let addresses: string[];
  if (target.isAddressLiteral) {
    addresses = [target.hostname];
  } else {
    try {
      addresses = (await deps.resolve(target.hostname)).map((resolved) => resolved.address);
    } catch {
      throw targetNotAllowed('the target host name does not resolve');
    }
  }
  for (const address of addresses) {
    const checked = checkTargetAddress(address, deps.policy);
    if (checked.outcome === 'refused') throw targetNotAllowed(checked.reason);
  }
  return target.href;
}

const targetNotAllowed = (reason: string) => new ApiError('WEBHOOK_TARGET_NOT_ALLOWED', `This webhook target is not allowed: ${reason}`);
