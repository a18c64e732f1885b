import { z } from 'zod';
import { env } from '@rsd/platform';

/**
 * The embedded runtime's own settings; each service and the runtime (RUNTIME, SHUTDOWN_DEADLINE_MS, …)
 * still read their own. DATA_DIR is read here too because the development secret lives there and must
 * exist before the services' configurations are parsed.
 */
export const embeddedConfigSchema = z.object({
  DATA_DIR: env.string('.data'),
  LOG_LEVEL: env.logLevel(),
  DEMO_ORGANIZATION_ID: env.string('demo-org'),
});
export type EmbeddedConfig = z.infer<typeof embeddedConfigSchema>;

/**
 * On a developer's machine the services listen on loopback unless told otherwise; containers and
 * clusters set the *_HOST variables explicitly.
 */
export const EMBEDDED_DEFAULTS: NodeJS.ProcessEnv = {
  READ_API_HOST: '127.0.0.1',
  CREDENTIALS_HOST: '127.0.0.1',
  SCORE_INGEST_HOST: '127.0.0.1',
  NOTIFIER_HOST: '127.0.0.1',
};

/**
 * How the process's connection cap (HTTP_MAX_CONNECTIONS) is split between its four servers: a flood
 * on one service fills only its own share, so the others keep serving. The read API, which every
 * recipient calls, gets 40 %; the administrators', the scoring engines' and the webhook subscriptions'
 * services 20 % each.
 */
export const CONNECTION_SHARES = { readApi: 0.4, credentials: 0.2, scoreIngest: 0.2, notifier: 0.2 } as const;
