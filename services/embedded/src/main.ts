import { consoleService } from '@rsd/console';
import { credentialsService } from '@rsd/credentials';
import { notifierService } from '@rsd/notifier';
import { loadConfig, runMain, signDevToken } from '@rsd/platform';
import { readApiService } from '@rsd/read-api';
import { runServices } from '@rsd/runtime';
import { scoreIngestService } from '@rsd/score-ingest';
import { EMBEDDED_DEFAULTS, embeddedConfigSchema } from './config';
import { welcomeText } from './welcome';

/**
 * The whole product in one process: the five services' declarations on one runtime. By default on
 * in-process adapters with everything in one SQLite database under DATA_DIR; with RUNTIME=distributed
 * on Kafka, MongoDB and Redis (to try the adapters; production runs each service's own main.ts).
 */
runMain(async () => {
  const { DEMO_ORGANIZATION_ID: organizationId } = loadConfig(embeddedConfigSchema, process.env);
  const product = await runServices([readApiService, credentialsService, scoreIngestService, notifierService, consoleService], {
    name: 'embedded',
    defaultRuntime: 'embedded',
    env: { ...EMBEDDED_DEFAULTS, ...process.env },
  });
  const urls = {
    readApi: product.urlOf(readApiService),
    credentials: product.urlOf(credentialsService),
    scoreIngest: product.urlOf(scoreIngestService),
    notifier: product.urlOf(notifierService),
    console: product.urlOf(consoleService),
  };
  product.log.info(urls, 'embedded runtime ready');
  // A token only with the runtime's own development secret: a configured one is the operator's to use.
  const devSecret = process.env.JWT_HS256_SECRET ? undefined : product.env.JWT_HS256_SECRET;
  process.stdout.write(
    welcomeText({
      readApiUrl: urls.readApi,
      credentialsUrl: urls.credentials,
      scoreIngestUrl: urls.scoreIngest,
      notifierUrl: urls.notifier,
      consoleUrl: urls.console,
      organizationId,
      // Decision 31: a new one-time link at every start (valid once, for 10 minutes).
      consoleSignInUrl: urls.console + (await product.service(consoleService).consoleSignInLink(organizationId)),
      firstStart: product.createdSecrets.includes('JWT_HS256_SECRET'),
      token: devSecret ? await signDevToken(devSecret, { org: organizationId, scope: 'authorizations:write scores:write' }) : undefined,
    }) + '\n',
  );
});
