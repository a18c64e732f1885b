import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as credentials from '@rsd/credentials';
import {
  closeServer,
  createLogger,
  createTokenVerifier,
  listen,
  loadConfig,
  loadConfigs,
  loadOrCreateDevSecret,
  onShutdown,
  portOf,
  runMain,
  signDevToken,
} from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import * as readApi from '@rsd/read-api';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import * as scoreIngest from '@rsd/score-ingest';
import { EMBEDDED_DEFAULTS, embeddedConfigSchema } from './config';
import { welcomeText } from './welcome';

/**
 * The whole product in one process. By default on in-process adapters with the event log on disk;
 * with RUNTIME=distributed on Kafka, MongoDB and Redis (to try the adapters; production runs each
 * service's own main.ts, where the read API also has its cache and change feed).
 */
async function main(): Promise<void> {
  const runtime = loadConfig(embeddedConfigSchema, process.env);
  const dataDir = resolve(runtime.DATA_DIR);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const devSecret = process.env.JWT_HS256_SECRET || process.env.JWT_JWKS_URL ? undefined : await loadOrCreateDevSecret(dataDir);
  const env = { ...EMBEDDED_DEFAULTS, ...(devSecret ? { JWT_HS256_SECRET: devSecret.secret } : {}), ...process.env };
  const [readApiConfig, credentialsConfig, scoreIngestConfig, runtimeConfig] = loadConfigs(
    [
      readApi.readApiConfigSchema,
      credentials.credentialsConfigSchema,
      scoreIngest.scoreIngestConfigSchema,
      runtimeConfigSchema({ defaultRuntime: 'embedded', needs: ['kafka', 'mongo', 'redis'] }),
    ],
    env,
  );

  const log = createLogger('embedded', runtime.LOG_LEVEL);
  const clock = systemClock;
  const adapters = await openRuntime({ ...runtimeConfig, DATA_DIR: dataDir }, 'embedded', log);
  const eventLog = adapters.eventLog;
  const store = await adapters.openAuthorizationStore();
  const views = await adapters.openReadViews();
  const verifyToken = createTokenVerifier(credentialsConfig);

  // Views are rebuilt from offset zero before the read API takes its first request.
  const projections = await readApi.startProjections({ eventLog, views, log: log.child({ service: 'read-api' }) });
  await projections.caughtUp;

  const relay = credentials.createOutboxRelay({ store, eventLog, log: log.child({ service: 'credentials' }) });
  await relay.flush();
  relay.start(credentialsConfig.OUTBOX_RELAY_INTERVAL_MS);
  const expiry = credentials.createExpiryScheduler({ store, relay, clock, log: log.child({ service: 'credentials' }) });
  expiry.start(credentialsConfig.EXPIRY_CHECK_INTERVAL_MS);

  const readApiServer = await listen(
    readApi.buildApp({
      config: readApiConfig,
      views,
      rateLimitStores: adapters.rateLimitStores(),
      clock,
      log: log.child({ service: 'read-api' }),
    }),
    readApiConfig.READ_API_PORT,
    readApiConfig.READ_API_HOST,
  );
  const credentialsServer = await listen(
    credentials.buildApp({ config: credentialsConfig, store, relay, clock, verifyToken, log: log.child({ service: 'credentials' }) }),
    credentialsConfig.CREDENTIALS_PORT,
    credentialsConfig.CREDENTIALS_HOST,
  );
  const scoreIngestServer = await listen(
    scoreIngest.buildApp({ config: scoreIngestConfig, eventLog, clock, verifyToken, log: log.child({ service: 'score-ingest' }) }),
    scoreIngestConfig.SCORE_INGEST_PORT,
    scoreIngestConfig.SCORE_INGEST_HOST,
  );

  const urlOf = (host: string, server: Parameters<typeof portOf>[0]) =>
    `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${portOf(server)}`;
  log.info(
    {
      readApi: urlOf(readApiConfig.READ_API_HOST, readApiServer),
      credentials: urlOf(credentialsConfig.CREDENTIALS_HOST, credentialsServer),
      scoreIngest: urlOf(scoreIngestConfig.SCORE_INGEST_HOST, scoreIngestServer),
      dataDir,
    },
    'embedded runtime ready',
  );
  process.stdout.write(
    welcomeText({
      readApiUrl: urlOf(readApiConfig.READ_API_HOST, readApiServer),
      credentialsUrl: urlOf(credentialsConfig.CREDENTIALS_HOST, credentialsServer),
      scoreIngestUrl: urlOf(scoreIngestConfig.SCORE_INGEST_HOST, scoreIngestServer),
      organizationId: runtime.DEMO_ORGANIZATION_ID,
      firstStart: devSecret?.created ?? false,
      token: devSecret
        ? await signDevToken(devSecret.secret, { org: runtime.DEMO_ORGANIZATION_ID, scope: 'authorizations:write scores:write' })
        : undefined,
    }) + '\n',
  );

  onShutdown(
    log,
    [
      () => Promise.all([closeServer(readApiServer), closeServer(credentialsServer), closeServer(scoreIngestServer)]).then(() => undefined),
      () => expiry.stop(),
      () => relay.stop(),
      () => projections.close(),
      () => store.close(),
      () => adapters.close(),
    ],
    runtimeConfig.SHUTDOWN_DEADLINE_MS,
  );
}

runMain(main);
