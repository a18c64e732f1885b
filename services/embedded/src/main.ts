import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as credentials from '@rsd/credentials';
import * as notifier from '@rsd/notifier';
import {
  closeServer,
  createLogger,
  httpServerConfigSchema,
  httpServerLimits,
  listenWhileStarting,
  loadConfig,
  loadConfigs,
  loadOrCreateDevSecret,
  onShutdown,
  portOf,
  runMain,
  serviceLogger,
  signDevToken,
  startWithRetries,
} from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import * as readApi from '@rsd/read-api';
import { dependencyOf, openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import * as scoreIngest from '@rsd/score-ingest';
import { CONNECTION_SHARES, EMBEDDED_DEFAULTS, embeddedConfigSchema } from './config';
import { welcomeText } from './welcome';

/**
 * The whole product in one process: the three service modules on one runtime. By default on
 * in-process adapters with the event log on disk; with RUNTIME=distributed on Kafka, MongoDB and
 * Redis (to try the adapters; production runs each service's own main.ts).
 */
async function main(): Promise<void> {
  const runtime = loadConfig(embeddedConfigSchema, process.env);
  const dataDir = resolve(runtime.DATA_DIR);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const devSecret = process.env.JWT_HS256_SECRET || process.env.JWT_JWKS_URL ? undefined : await loadOrCreateDevSecret(dataDir);
  const env = { ...EMBEDDED_DEFAULTS, ...(devSecret ? { JWT_HS256_SECRET: devSecret.secret } : {}), ...process.env };
  const [readApiConfig, credentialsConfig, scoreIngestConfig, notifierConfig, runtimeConfig, httpConfig] = loadConfigs(
    [
      readApi.readApiConfigSchema,
      credentials.credentialsConfigSchema,
      scoreIngest.scoreIngestConfigSchema,
      notifier.notifierConfigSchema,
      runtimeConfigSchema({ defaultRuntime: 'embedded', needs: ['kafka', 'mongo', 'redis'] }),
      httpServerConfigSchema,
    ],
    env,
  );

  const log = createLogger('embedded', runtime.LOG_LEVEL);
  const clock = systemClock;
  const distributed = runtimeConfig.RUNTIME === 'distributed';

  // One process, one descriptor limit: the three servers share the connection cap.
  const serverOptions = (service: keyof typeof CONNECTION_SHARES, name: string) => ({
    limits: httpServerLimits(httpConfig, CONNECTION_SHARES[service]),
    log: serviceLogger(log, name),
  });
  const readApiServer = await listenWhileStarting(
    readApiConfig.READ_API_PORT,
    readApiConfig.READ_API_HOST,
    serverOptions('readApi', 'read-api'),
  );
  const credentialsServer = await listenWhileStarting(
    credentialsConfig.CREDENTIALS_PORT,
    credentialsConfig.CREDENTIALS_HOST,
    serverOptions('credentials', 'credentials'),
  );
  const scoreIngestServer = await listenWhileStarting(
    scoreIngestConfig.SCORE_INGEST_PORT,
    scoreIngestConfig.SCORE_INGEST_HOST,
    serverOptions('scoreIngest', 'score-ingest'),
  );
  const notifierServer = await listenWhileStarting(
    notifierConfig.NOTIFIER_PORT,
    notifierConfig.NOTIFIER_HOST,
    serverOptions('notifier', 'notifier'),
  );
  const servers = [readApiServer, credentialsServer, scoreIngestServer, notifierServer];

  // On the distributed runtime it waits for Kafka, MongoDB and Redis like each service's own main;
  // the embedded runtime has nothing to wait for, so a failure there ends the start.
  const start = startWithRetries(
    async (scope) => {
      const adapters = await openRuntime({ ...runtimeConfig, DATA_DIR: dataDir }, 'embedded', log);
      scope.closeOnStop(() => adapters.close());
      const readApiModule = await readApi.createReadApiModule({
        config: { ...readApiConfig, READ_VIEWS_DB: runtimeConfig.READ_VIEWS_DB },
        runtime: adapters,
        clock,
        log: serviceLogger(log, 'read-api'),
      });
      scope.closeOnStop(() => readApiModule.stop());
      // The embedded views catch up with what was appended since their last position before the
      // read API takes its first request; shared views report their catching up through /readyz instead.
      if (!distributed) await readApiModule.viewsCaughtUp;
      const credentialsModule = await credentials.createCredentialsModule({
        config: credentialsConfig,
        runtime: adapters,
        clock,
        log: serviceLogger(log, 'credentials'),
      });
      scope.closeOnStop(() => credentialsModule.stop());
      const scoreIngestModule = await scoreIngest.createScoreIngestModule({
        config: scoreIngestConfig,
        runtime: adapters,
        clock,
        log: serviceLogger(log, 'score-ingest'),
      });
      scope.closeOnStop(() => scoreIngestModule.stop());
      const notifierModule = await notifier.createNotifierModule({
        config: { ...notifierConfig, NOTIFIER_DB: runtimeConfig.NOTIFIER_DB },
        runtime: adapters,
        clock,
        log: serviceLogger(log, 'notifier'),
      });
      scope.closeOnStop(() => notifierModule.stop());
      if (!distributed) await notifierModule.caughtUp;
      return {
        consoleSignInLink: credentialsModule.consoleSignInLink,
        readApi: readApiModule.app,
        credentials: credentialsModule.app,
        scoreIngest: scoreIngestModule.app,
        notifier: notifierModule.app,
      };
    },
    {
      log,
      deadlineMs: runtimeConfig.START_DEADLINE_MS,
      dependencyOf,
      isFatal: () => !distributed,
      onFailedAttempt: (failure) => servers.forEach((server) => server.attemptFailed(failure)),
    },
  );
  onShutdown(
    log,
    [() => Promise.all(servers.map((server) => closeServer(server.server))).then(() => undefined), () => start.stop()],
    runtimeConfig.SHUTDOWN_DEADLINE_MS,
  );

  const apps = await start.started;
  readApiServer.serve(apps.readApi);
  credentialsServer.serve(apps.credentials);
  scoreIngestServer.serve(apps.scoreIngest);
  notifierServer.serve(apps.notifier);

  const urlOf = (host: string, server: Parameters<typeof portOf>[0]) =>
    `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${portOf(server)}`;
  const urls = {
    readApi: urlOf(readApiConfig.READ_API_HOST, readApiServer.server),
    credentials: urlOf(credentialsConfig.CREDENTIALS_HOST, credentialsServer.server),
    scoreIngest: urlOf(scoreIngestConfig.SCORE_INGEST_HOST, scoreIngestServer.server),
    notifier: urlOf(notifierConfig.NOTIFIER_HOST, notifierServer.server),
  };
  log.info({ ...urls, dataDir, runtime: runtimeConfig.RUNTIME }, 'embedded runtime ready');
  process.stdout.write(
    welcomeText({
      readApiUrl: urls.readApi,
      credentialsUrl: urls.credentials,
      scoreIngestUrl: urls.scoreIngest,
      notifierUrl: urls.notifier,
      organizationId: runtime.DEMO_ORGANIZATION_ID,
      // Decision 31: a new one-time link at every start (valid once, for 10 minutes).
      consoleSignInUrl: urls.credentials + (await apps.consoleSignInLink(runtime.DEMO_ORGANIZATION_ID)),
      firstStart: devSecret?.created ?? false,
      token: devSecret
        ? await signDevToken(devSecret.secret, { org: runtime.DEMO_ORGANIZATION_ID, scope: 'authorizations:write scores:write' })
        : undefined,
    }) + '\n',
  );
}

runMain(main);
