import type { Request, RequestHandler, Response, Router } from 'express';
import { ApiError, type Logger } from '@rsd/platform';
import type { AlertWebhookAccess, AlertWebhooks, ConsoleActor } from './alert-webhooks';
import {
  ALERT_WEBHOOKS_PATH,
  alertWebhookPage,
  alertWebhookPath,
  alertWebhooksPage,
  alertWebhooksUnavailablePage,
  noticeOf,
  SECRET_OVERLAP_CHOICES,
  webhookSecretPage,
  type WebhookForm,
  type WebhookNotice,
  type WebhookProblems,
} from './alert-webhook-pages';
import type { Html } from './html';
import { problemsByField } from './page-parts';
import type { Viewer } from './pages';

export interface AlertWebhookRouteDeps {
  /** Absent: the console reaches no notifier, and the pages say where the webhooks are managed instead. */
  access: AlertWebhookAccess | undefined;
  signedIn: RequestHandler;
  /** A signed-in, same-origin form post with the session's CSRF token. */
  change: RequestHandler[];
  actorOf: (res: Response) => ConsoleActor;
  viewerOf: (res: Response) => Viewer;
  page: (res: Response, status: number, body: Html) => void;
  log: Logger;
}

/** Refusals a form shows beside its fields; any other refusal is the console's error page. */
const FORM_REFUSALS = new Set(['VALIDATION_FAILED', 'WEBHOOK_TARGET_NOT_ALLOWED', 'WEBHOOK_LIMIT_REACHED']);

/**
 * Decisions 44-45 in the console: the organization's alert webhooks on the notifier, the whole
 * lifecycle (create, change, pause and enable, test, rotate the secret, redeliver, delete), each
 * through the notifier's own API as the signed-in organization.
 */
export function alertWebhookRoutes(router: Router, deps: AlertWebhookRouteDeps): void {
  const { signedIn, change, page, viewerOf, actorOf } = deps;
  const local = ALERT_WEBHOOKS_PATH.slice('/console'.length);
  /** Runs `use` for the signed-in organization; with no notifier, shows where to manage them instead. */
  const withWebhooks =
    (use: (webhooks: AlertWebhooks, req: Request, res: Response) => Promise<void>): RequestHandler =>
    async (req, res) => {
      if (!deps.access) return page(res, 200, alertWebhooksUnavailablePage(viewerOf(res)));
      await deps.access.run(actorOf(res), (webhooks) => use(webhooks, req, res));
    };
  const audit = (res: Response, id: string, what: string) =>
    deps.log.info(
      { organizationId: actorOf(res).organizationId, subject: actorOf(res).subject, webhookId: id },
      `console: alert webhook ${what}`,
    );
  const back = (res: Response, id: string | undefined, notice: WebhookNotice) =>
    res.redirect(303, `${id === undefined ? ALERT_WEBHOOKS_PATH : alertWebhookPath(id)}?notice=${notice}`);

  router.get(
    local,
    signedIn,
    withWebhooks(async (webhooks, req, res) => {
      page(res, 200, alertWebhooksPage(viewerOf(res), await webhooks.list(), { notice: noticeOf(req.query.notice) }));
    }),
  );

  router.post(
    local,
    ...change,
    withWebhooks(async (webhooks, req, res) => {
      const form = webhookFormOf(req.body as Record<string, unknown>);
      try {
        const created = await webhooks.create(form.url, form.events as Parameters<AlertWebhooks['create']>[1]);
        audit(res, created.id, 'created');
        page(res, 201, webhookSecretPage(viewerOf(res), created, created.secret, 'created'));
      } catch (error) {
        const problems = formProblemsOf(error);
        page(res, (error as ApiError).status, alertWebhooksPage(viewerOf(res), await webhooks.list(), { form, problems }));
      }
    }),
  );

  router.get(
    `${local}/:id`,
    signedIn,
    withWebhooks(async (webhooks, req, res) => {
      const { webhook, deliveries } = await oneWebhook(webhooks, String(req.params.id));
      page(res, 200, alertWebhookPage(viewerOf(res), webhook, deliveries, { notice: noticeOf(req.query.notice) }));
    }),
  );

  router.post(
    `${local}/:id`,
    ...change,
    withWebhooks(async (webhooks, req, res) => {
      const id = String(req.params.id);
      const form = webhookFormOf(req.body as Record<string, unknown>);
      try {
        await webhooks.update(id, { url: form.url, events: form.events as Parameters<AlertWebhooks['create']>[1] });
      } catch (error) {
        const problems = formProblemsOf(error);
        const { webhook, deliveries } = await oneWebhook(webhooks, id);
        return page(res, (error as ApiError).status, alertWebhookPage(viewerOf(res), webhook, deliveries, { form, problems }));
      }
      audit(res, id, 'changed');
      back(res, id, 'updated');
    }),
  );

  /** A change of one webhook that goes back to its page (or, deleted, to the list) with a notice of what was done. */
  const act = (
    path: string,
    run: (webhooks: AlertWebhooks, id: string, req: Request) => Promise<{ what: string; notice: WebhookNotice }>,
  ) =>
    router.post(
      `${local}/:id${path}`,
      ...change,
      withWebhooks(async (webhooks, req, res) => {
        const id = String(req.params.id);
        const done = await run(webhooks, id, req);
        audit(res, id, done.what);
        back(res, done.notice === 'deleted' ? undefined : id, done.notice);
      }),
    );

  act('/enabled', async (webhooks, id, req) => {
    const value = (req.body as Record<string, unknown>).enabled;
    if (value !== 'true' && value !== 'false') throw new ApiError('VALIDATION_FAILED', 'Choose whether the webhook is paused or enabled.');
    await webhooks.update(id, { enabled: value === 'true' });
    const notice = value === 'true' ? 'enabled' : 'paused';
    return { what: notice, notice };
  });
  act('/test', async (webhooks, id) => {
    await webhooks.test(id);
    return { what: 'test delivery asked for', notice: 'tested' };
  });
  act('/deliveries/:messageId/redeliver', async (webhooks, id, req) => {
    await webhooks.redeliver(id, String(req.params.messageId));
    return { what: 'delivery sent again', notice: 'redelivered' };
  });
  act('/delete', async (webhooks, id) => {
    await webhooks.delete(id);
    return { what: 'deleted', notice: 'deleted' };
  });

  router.post(
    `${local}/:id/rotate-secret`,
    ...change,
    withWebhooks(async (webhooks, req, res) => {
      const id = String(req.params.id);
      const overlap = (req.body as Record<string, unknown>).overlapSeconds;
      const choice = SECRET_OVERLAP_CHOICES.find((candidate) => String(candidate.seconds) === overlap);
      if (!choice) throw new ApiError('VALIDATION_FAILED', 'Choose how long the previous secret keeps signing.');
      const { webhook } = await oneWebhook(webhooks, id, { deliveries: false });
      const secret = await webhooks.rotateSecret(id, { overlapSeconds: choice.seconds });
      audit(res, id, 'secret rotated');
      page(res, 201, webhookSecretPage(viewerOf(res), webhook, secret, 'rotated', choice.seconds));
    }),
  );
}

/** The notifier lists an owner's webhooks (at most a few): one of them, and its deliveries, or 404. */
async function oneWebhook(webhooks: AlertWebhooks, id: string, options: { deliveries: boolean } = { deliveries: true }) {
  const webhook = (await webhooks.list()).find((candidate) => candidate.id === id);
  if (!webhook) throw new ApiError('WEBHOOK_NOT_FOUND', 'This organization has no alert webhook with that id.');
  return { webhook, deliveries: options.deliveries ? await webhooks.deliveries(id) : [] };
}

function webhookFormOf(body: Record<string, unknown>): WebhookForm {
  const events = body.events;
  return {
    url: typeof body.url === 'string' ? body.url.trim() : '',
    events: (Array.isArray(events) ? events : [events]).filter((event): event is string => typeof event === 'string'),
  };
}

/** A refusal the form shows by field (an address not allowed is the address's); anything else goes on to the console's error page. */
function formProblemsOf(error: unknown): WebhookProblems {
  if (!(error instanceof ApiError) || !FORM_REFUSALS.has(error.code)) throw error;
  if (error.code === 'WEBHOOK_TARGET_NOT_ALLOWED') return { url: [error.message] };
  return problemsByField(error, ['url', 'events']);
}
