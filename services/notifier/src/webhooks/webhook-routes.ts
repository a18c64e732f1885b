import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import {
  createWebhookRequestSchema,
  rotateWebhookSecretRequestSchema,
  updateWebhookRequestSchema,
  webhookIdSchema,
  webhookMessageIdSchema,
  type CreatedWebhook,
  type RotatedWebhookSecret,
  type Webhook,
  type WebhookDeliveryList,
  type WebhookEventType,
  type WebhookList,
  type WebhookMessageAccepted,
  type WebhookChanged,
  type WebhookTestPayload,
} from '@rsd/contracts';
import {
  changedWebhook,
  checkTargetAddress,
  checkTargetUrl,
  disabledReasonOf,
  generateClientId,
  isDisabledForItsKey,
  recordedKey,
  reenableRefusal,
  rotatedWebhook,
  webhookAuditAction,
  webhookChanged,
  webhookOwnerKey,
  type TargetPolicy,
  type WebhookChange,
} from '@rsd/domain';
import {
  ApiError,
  hasMalformedPercentEncoding,
  jsonBody,
  malformedPath,
  methodNotAllowed,
  newWebhookSecret,
  parsedBody,
  validationFailed,
} from '@rsd/platform';
import type { StoredWebhook, WebhookStore } from '@rsd/ports';
import { KEY_READ_ONLY_MESSAGE, requireCurrentKey } from '@rsd/recipient-access';
import type { z } from 'zod';
import type { Resolve } from '../delivery/send-webhook';
import type { SecretSealer } from './secret-sealing';
import type { OwnerAccess, WebhookOwnerDeclaration } from './webhook-owners';

export interface WebhookRoutesDeps {
  store: WebhookStore;
  sealer: SecretSealer;
  policy: TargetPolicy;
  resolve: Resolve;
  clock: { now(): Date };
  attemptsListed: number;
  /** Told when a test or a redelivery was queued, so that the worker looks at once. */
  onQueued?: () => void;
  /**
   * Decision 54: records a change to a webhook or an alert subscription in the event log (the audit
   * trail's record), before the change is answered. Absent: nothing is recorded (unit tests).
   */
  recordChange?: (event: WebhookChanged) => Promise<void>;
}

/** The routes under an owner's `/webhooks`, and the methods each answers. */
const ROUTES = {
  collection: { suffix: '', allowed: ['GET', 'POST'] },
  item: { suffix: '/:id', allowed: ['PATCH', 'DELETE'] },
  deliveries: { suffix: '/:id/deliveries', allowed: ['GET'] },
  'rotate-secret': { suffix: '/:id/rotate-secret', allowed: ['POST'] },
  test: { suffix: '/:id/test', allowed: ['POST'] },
  redeliver: { suffix: '/:id/deliveries/:messageId/redeliver', allowed: ['POST'] },
} as const;
type Route = keyof typeof ROUTES;

/** A subscription's body is small: a URL, up to three event names and three conditions. */
const BODY_LIMIT = '16kb';

/**
 * Decisions 26 and 45: the whole lifecycle of one owner kind's webhooks, under `/v1{path}/webhooks`:
 * create, list, change (`PATCH`, re-enabling included), delete, the attempts, secret rotation, a test
 * delivery and a redelivery. Every owner kind gets the same routes from its declaration; only its
 * path, its authentication, its limit and the events it may subscribe to differ.
 */
export function webhookRoutes(declaration: WebhookOwnerDeclaration, deps: WebhookRoutesDeps): RequestHandler {
  const { store, clock } = deps;
  const { pattern, parameterCount } = routePattern(declaration.path);
  const [requireJson, parseJson] = jsonBody(BODY_LIMIT) as [RequestHandler, RequestHandler];
  // After authentication, like every other check: an unknown caller learns nothing about the body it sent.
  const parseBody = async <T>(req: Request, res: Response, schema: z.ZodType<T>): Promise<T> => {
    await new Promise<void>((resolve, reject) => {
      const failed = (error: unknown) => reject(error instanceof Error ? error : new Error(String(error)));
      requireJson(req, res, (error?: unknown) =>
        error ? failed(error) : parseJson(req, res, (parseError?: unknown) => (parseError ? failed(parseError) : resolve())),
      );
    });
    return parsedBody(schema, req.body);
  };
  const notFound = () => new ApiError('WEBHOOK_NOT_FOUND', `This ${declaration.noun} has no webhook with that id`);
  const checkEvents = (access: OwnerAccess, events: readonly WebhookEventType[]) => {
    // Recipients hear of scores and their grants; organizations of their alerts (decision 44): never each other's.
    const foreign = events.flatMap((type, index) =>
      declaration.events.includes(type)
        ? []
        : [{ path: `events[${index}]`, message: `is not an event of ${declaration.noun} webhooks (${declaration.events.join(', ')})` }],
    );
    if (foreign.length > 0) throw validationFailed(foreign);
    const refused = access.refusedEvents(events);
    if (refused.length > 0)
      throw new ApiError('INSUFFICIENT_SCOPE', `This credential's scopes do not allow these events: ${refused.join(', ')}`);
  };

  async function owned(access: OwnerAccess, id: string): Promise<StoredWebhook> {
    const webhook = await store.findWebhook(webhookOwnerKey(access.owner), id);
    if (!webhook) throw notFound();
    return webhook;
  }

  /**
   * Reads the webhook, changes it and writes it back unless its status changed meanwhile (the worker
   * disabled it); then once more from what it is now.
   */
  async function change(access: OwnerAccess, id: string, changed: (webhook: StoredWebhook) => StoredWebhook): Promise<StoredWebhook> {
    for (let attempt = 1; ; attempt += 1) {
      const webhook = await owned(access, id);
      const next = changed(webhook);
      if (await store.updateWebhook(next, webhook.status)) return next;
      if (attempt >= 3) throw new Error(`webhook ${id} kept changing under an update`);
    }
  }

  /** A test or a redelivery goes only to a webhook that delivers: paused or disabled, it would be dropped unsent. */
  function assertActive(webhook: StoredWebhook): void {
    if (webhook.status === 'active') return;
    if (isDisabledForItsKey(webhook)) {
      throw new ApiError(
        'WEBHOOK_NOT_ACTIVE',
        `This webhook is disabled (${webhook.disabledReason}); re-enable it with PATCH {"url": …, "enabled": true} first`,
      );
    }
    throw new ApiError('WEBHOOK_NOT_ACTIVE', `This webhook is ${webhook.status}; re-enable it with PATCH {"enabled": true} first`);
  }

  /**
   * Decision 50, after a write that recorded the caller's key: read the key again. One replaced while the
   * request ran (its rotation reached the notifier after the authentication, say while a slow name
   * resolved) keeps nothing: what it wrote is undone, and the answer is the refusal it would get now.
   * Whichever comes first, this read or the projection's second look at the cut-off, sees the other's write.
   */
  async function keptByCurrentKey(access: OwnerAccess, undo: () => Promise<unknown>): Promise<void> {
    if (!access.stillCurrent || (await access.stillCurrent())) return;
    await undo();
    throw new ApiError('KEY_READ_ONLY', KEY_READ_ONLY_MESSAGE);
  }

  /** Decision 54: the change made, who made it and where, for the owner's organization's trail; nothing of the webhook's URL or secret. */
  async function recorded(access: OwnerAccess, webhookId: string, change: WebhookChange): Promise<void> {
    if (!access.audit || !deps.recordChange) return;
    const { owner, organizationId, clientId, origin } = access.audit;
    const action = webhookAuditAction(owner, change);
    await deps.recordChange(
      webhookChanged({ organizationId, clientId, webhookId, action, origin }, { id: randomUUID(), time: clock.now() }),
    );
  }

  async function create(req: Request, res: Response, access: OwnerAccess, base: string): Promise<void> {
    const { url, events, conditions } = await parseBody(req, res, createWebhookRequestSchema);
    const target = await checkTarget(url, deps);
    checkEvents(access, events);
    const secret = newWebhookSecret();
    const now = clock.now().toISOString();
    const webhook: StoredWebhook = {
      id: generateClientId('wh'),
      clientId: webhookOwnerKey(access.owner),
      organizationId: access.organizationId,
      url: target,
      events: [...events],
      status: 'active',
      createdAt: now,
      disabledAt: null,
      ...(conditions ? { conditions } : {}),
      // Decision 50: the key that made it, by its digest; an organization's (a token) records none.
      ...(access.changingKey ? recordedKey(access.changingKey) : {}),
      sealedSecret: deps.sealer.seal(secret),
    };
    if ((await store.addWebhook(webhook, declaration.limit)) === 'limit-reached') {
      throw new ApiError(
        'WEBHOOK_LIMIT_REACHED',
        `This ${declaration.noun} has ${declaration.limit} webhooks already, the most it may have; delete one first`,
      );
    }
    await keptByCurrentKey(access, () => store.deleteWebhook(webhook.clientId, webhook.id));
    await recorded(access, webhook.id, 'created');
    const created: CreatedWebhook = { ...resourceOf(webhook), secret };
    res.status(201).location(`${base}/${webhook.id}`).json(created);
  }

  async function list(res: Response, access: OwnerAccess): Promise<void> {
    const body: WebhookList = { webhooks: (await store.listWebhooks(webhookOwnerKey(access.owner))).map(resourceOf) };
    res.json(body);
  }

  async function update(req: Request, res: Response, access: OwnerAccess, id: string): Promise<void> {
    const asked = await parseBody(req, res, updateWebhookRequestSchema);
    await owned(access, id);
    const url = asked.url === undefined ? undefined : await checkTarget(asked.url, deps);
    if (asked.events) checkEvents(access, asked.events);
    const changed = await change(access, id, (webhook) => {
      // Decision 50: one disabled for its key comes back only with its URL set again, which it then answers to.
      const refusal = reenableRefusal(webhook, asked);
      if (refusal) throw validationFailed([{ path: 'url', message: refusal }]);
      return changedWebhook(webhook, { ...asked, ...(url === undefined ? {} : { url }) }, clock.now(), access.changingKey);
    });
    // Recorded before the key is read again: a change then disabled for a replaced key was still made.
    await recorded(access, id, 'updated');
    // A URL set by a key replaced meanwhile is not delivered to: the webhook is disabled as that key's cut-off would.
    if (url !== undefined) {
      await keptByCurrentKey(access, () =>
        change(access, id, (webhook) =>
          isDisabledForItsKey(webhook)
            ? webhook
            : { ...webhook, status: 'disabled', disabledAt: clock.now().toISOString(), disabledReason: 'key_ended' },
        ),
      );
    }
    res.json(resourceOf(changed));
  }

  async function remove(res: Response, access: OwnerAccess, id: string): Promise<void> {
    if (!(await store.deleteWebhook(webhookOwnerKey(access.owner), id))) throw notFound();
    await recorded(access, id, 'deleted');
    res.status(204).end();
  }

  async function deliveries(res: Response, access: OwnerAccess, id: string): Promise<void> {
    await owned(access, id);
    const body: WebhookDeliveryList = { deliveries: await store.attempts(id, deps.attemptsListed) };
    res.json(body);
  }

  async function rotateSecret(req: Request, res: Response, access: OwnerAccess, id: string): Promise<void> {
    const { overlapSeconds } = await parseBody(req, res, rotateWebhookSecretRequestSchema);
    const secret = newWebhookSecret();
    const sealed = deps.sealer.seal(secret);
    await change(access, id, (webhook) => rotatedWebhook(webhook, sealed, overlapSeconds, clock.now()));
    await recorded(access, id, 'secret_rotated');
    const body: RotatedWebhookSecret = { secret };
    res.status(201).json(body);
  }

  async function test(res: Response, access: OwnerAccess, id: string): Promise<void> {
    const webhook = await owned(access, id);
    assertActive(webhook);
    const now = clock.now().toISOString();
    const messageId = generateClientId('msg');
    const payload: WebhookTestPayload = { type: 'webhook.test', timestamp: now, data: { webhookId: webhook.id } };
    await store.enqueue([
      {
        messageId,
        key: `${webhook.id}:test:${messageId}`,
        webhookId: webhook.id,
        clientId: webhook.clientId,
        eventType: 'webhook.test',
        body: JSON.stringify(payload),
        // A grant's test goes where its data would, within its allow list; a portfolio's carries no grant's data.
        ...(access.owner.kind === 'grant' ? { grantClientId: access.owner.clientId } : {}),
        attempts: 0,
        firstAttemptAt: null,
        dueAt: now,
      },
    ]);
    deps.onQueued?.();
    const body: WebhookMessageAccepted = { messageId };
    res.status(202).json(body);
  }

  async function redeliver(res: Response, access: OwnerAccess, id: string, messageId: string): Promise<void> {
    const webhook = await owned(access, id);
    const message = webhookMessageIdSchema.safeParse(messageId).success ? await store.findMessage(webhook.id, messageId) : undefined;
    if (!message) {
      throw new ApiError('WEBHOOK_MESSAGE_NOT_FOUND', 'This webhook has no delivery with that messageId in the last 7 days');
    }
    assertActive(webhook);
    // The same webhook-id and body, as a new entry of the queue: its own retries, on the same schedule.
    await store.enqueue([
      {
        ...message,
        key: `${message.key}:redelivery:${randomUUID()}`,
        attempts: 0,
        firstAttemptAt: null,
        dueAt: clock.now().toISOString(),
      },
    ]);
    deps.onQueued?.();
    const body: WebhookMessageAccepted = { messageId: message.messageId };
    res.status(202).json(body);
  }

  return async (req, res, next) => {
    const match = pattern.exec(req.path);
    if (!match) {
      next();
      return;
    }
    const parameters = match.slice(1, 1 + parameterCount).map((value) => value ?? '');
    const [id, action, messageId, redeliverPath] = match.slice(1 + parameterCount);
    const route: Route = id === undefined ? 'collection' : redeliverPath ? 'redeliver' : ((action as Route | undefined) ?? 'item');
    const { suffix, allowed } = ROUTES[route];
    res.locals.metricsRoute = `/v1${declaration.path}/webhooks${suffix}`;
    // Subscriptions, secrets and delivery logs are per caller: no shared cache may keep them.
    res.setHeader('Cache-Control', 'no-store');
    if (!(allowed as readonly string[]).includes(req.method)) {
      methodNotAllowed([...allowed])(req, res, next);
      return;
    }
    // The owner's own parameters are its authentication's to decode (a grant's Client ID is INVALID_CLIENT_ID, as on the read API).
    if ([id, messageId].some((segment) => segment !== undefined && hasMalformedPercentEncoding(segment))) throw malformedPath();
    const access = await declaration.authenticate(req, res, parameters);
    // Decision 50: listing reads; everything else manages, which the previous key of an overlap may not.
    if (req.method !== 'GET') requireCurrentKey(access);
    const base = `/v1${fill(declaration.path, parameters)}/webhooks`;
    if (id === undefined) return req.method === 'POST' ? create(req, res, access, base) : list(res, access);
    // An id that cannot be one is unknown without a lookup: no store sees what a hostile path carries.
    if (!webhookIdSchema.safeParse(id).success) throw notFound();
    switch (route) {
      case 'item':
        return req.method === 'PATCH' ? update(req, res, access, id) : remove(res, access, id);
      case 'deliveries':
        return deliveries(res, access, id);
      case 'rotate-secret':
        return rotateSecret(req, res, access, id);
      case 'test':
        return test(res, access, id);
      case 'redeliver':
        return redeliver(res, access, id, messageId ?? '');
      default:
        return next();
    }
  };
}

/**
 * `/customers/:clientId` → a pattern of `/customers/{clientId}/webhooks[/{id}[/deliveries|/rotate-secret|/test
 * |/deliveries/{messageId}/redeliver]]`, each parameter captured as received.
 */
function routePattern(path: string): { pattern: RegExp; parameterCount: number } {
  const segments = path.split('/').filter(Boolean);
  const prefix = segments.map((segment) => (segment.startsWith(':') ? '/([^/]*)' : `/${escapeRegExp(segment)}`)).join('');
  const parameterCount = segments.filter((segment) => segment.startsWith(':')).length;
  const pattern = new RegExp(`^${prefix}/webhooks(?:/([^/]+)(?:/(deliveries|rotate-secret|test)|/deliveries/([^/]+)/(redeliver))?)?/?$`);
  return { pattern, parameterCount };
}

function fill(path: string, parameters: readonly string[]): string {
  let next = 0;
  return path.replace(/:[A-Za-z]+/g, () => parameters[next++] ?? '');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function resourceOf(webhook: StoredWebhook): Webhook {
  const { id, url, events, status, conditions, createdAt } = webhook;
  return { id, url, events, status, disabledReason: disabledReasonOf(webhook), conditions: conditions ?? {}, createdAt };
}

/** Decision 28 at creation and at every change of URL: the URL, then every address its host resolves to now (checked again at each attempt). */
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
