import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { finishApp, mountApiDocs, type Logger } from '@rsd/platform';
import { createRecipientApp } from '@rsd/recipient-access';
import type { NotifierConfig } from './config';
import { notifierOpenApi } from '@rsd/api-documents';
import type { WebhookOwnerDeclaration } from './webhooks/webhook-owners';
import { webhookRoutes, type WebhookRoutesDeps } from './webhooks/webhook-routes';

export interface NotifierAppDeps extends WebhookRoutesDeps {
  config: NotifierConfig;
  log: Logger;
  /** Every kind of webhook owner the notifier serves: each gets the whole lifecycle under its own path. */
  owners: readonly WebhookOwnerDeclaration[];
  operations?: Operations;
}

/** The notifier without a listening socket: main.ts, the embedded runtime and the tests decide where it listens. */
export function buildApp(deps: NotifierAppDeps): Express {
  const { config, log, owners } = deps;
  const app = createRecipientApp({ config, log, operations: deps.operations });
  mountApiDocs(app, notifierOpenApi(owners));
  for (const owner of owners) app.use('/v1', webhookRoutes(owner, deps));
  return finishApp(app, log);
}
