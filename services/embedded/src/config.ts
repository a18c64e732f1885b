import { z } from 'zod';
import { env } from '@rsd/platform';

/** The embedded runtime's own settings; the services and the runner (RUNTIME, DATA_DIR, …) read theirs. */
export const embeddedConfigSchema = z.object({
  DEMO_ORGANIZATION_ID: env.string('demo-org'),
});

/**
 * On a developer's machine the services listen on loopback unless told otherwise; containers and
 * clusters set the *_HOST variables explicitly.
 */
export const EMBEDDED_DEFAULTS: NodeJS.ProcessEnv = {
  READ_API_HOST: '127.0.0.1',
  CREDENTIALS_HOST: '127.0.0.1',
  SCORE_INGEST_HOST: '127.0.0.1',
  NOTIFIER_HOST: '127.0.0.1',
  CONSOLE_HOST: '127.0.0.1',
};
