import type { NotifierConfig } from '../config';
import { grantWebhooks, organizationWebhooks, portfolioWebhooks, type WebhookOwnerDeclaration } from './webhook-owners';

/**
 * The notifier's owners of webhooks as its OpenAPI document describes them, for a document built outside a running
 * notifier (the committed openapi/notifier.json): the same declarations as notifier-module.ts's, whose
 * authentication is never called.
 */
export function documentedWebhookOwners(config: NotifierConfig): WebhookOwnerDeclaration[] {
  const notCalled = () => Promise.reject(new Error('a documented owner does not authenticate'));
  return [grantWebhooks(notCalled, config), portfolioWebhooks(notCalled, config), organizationWebhooks(notCalled, notCalled, config)];
}
