import type { ServiceDefinition } from '@rsd/ports';
import { notifierConfigSchema, type NotifierConfig } from './config';
import { createNotifierModule } from './notifier-module';
import { WEBHOOK_KEY_SECRET } from './webhooks/secret-sealing';

/**
 * The notifier: webhooks for recipients (decisions 26–28). Run one replica: the delivery queue has
 * one worker (docs/decisions/0026-webhooks.md).
 */
export const notifierService: ServiceDefinition<NotifierConfig> = {
  name: 'notifier',
  configSchema: notifierConfigSchema,
  needs: ['kafka', 'mongo', 'redis'],
  secrets: [WEBHOOK_KEY_SECRET],
  listenOn: (config) => ({ port: config.NOTIFIER_PORT, host: config.NOTIFIER_HOST }),
  connectionShare: 0.2,
  start: createNotifierModule,
};
