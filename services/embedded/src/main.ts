import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as credentials from '@rsd/credentials';
import {
  closeServer,
  createLogger,
  httpServerConfigSchema,
  httpServerLimits,
  listen,
  loadConfig,
  loadConfigs,
  loadOrCreateDevSecret,
  onShutdown,
  portOf,
  runMain,
  serviceLogger,
  signDevToken,
} from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import * as readApi from '@rsd/read-api';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';
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
  const [readApiConfig, credentialsConfig, scoreIngestConfig, runtimeConfig, httpConfig] = loadConfigs(
    [
      readApi.readApiConfigSchema,
      credentials.credentialsConfigSchema,
      scoreIngest.scoreIngestConfigSchema,
      runtimeConfigSchema({ defaultRuntime: 'embedded', needs: ['kafka', 'mongo', 'redis'] }),
      httpServerConfigSchema,
    ],
    env,
  );

  const log = createLogger('embedded', runtime.LOG_LEVEL);
  const clock = systemClock;
  const adapters = await openRuntime({ ...runtimeConfig, DATA_DIR: dataDir }, 'embedded', log);

  const readApiModule = await readApi.createReadApiModule({
    config: { ...readApiConfig, READ_VIEWS_DB: runtimeConfig.READ_VIEWS_DB },
    runtime: adapters,
    clock,
    log: serviceLogger(log, 'read-api'),
  });
  // Views are rebuilt from offset zero before the read API takes its first request.
  await readApiModule.viewsCaughtUp;
  const credentialsModule = await credentials.createCredentialsModule({
    config: credentialsConfig,
    runtime: adapters,
    clock,
    log: serviceLogger(log, 'credentials'),
  });
  const scoreIngestModule = await scoreIngest.createScoreIngestModule({
    config: scoreIngestConfig,
    runtime: adapters,
    clock,
    log: serviceLogger(log, 'score-ingest'),
  });

  // One process, one descriptor limit: the three servers share the connection cap.
  const serverOptions = (service: keyof typeof CONNECTION_SHARES, name: string) => ({
    limits: httpServerLimits(httpConfig, CONNECTION_SHARES[service]),
    log: serviceLogger(log, name),
  });
  const readApiServer = await listen(
    readApiModule.app,
    readApiConfig.READ_API_PORT,
    readApiConfig.READ_API_HOST,
    serverOptions('readApi', 'read-api'),
  );
  const credentialsServer = await listen(
    credentialsModule.app,
    credentialsConfig.CREDENTIALS_PORT,
    credentialsConfig.CREDENTIALS_HOST,
    serverOptions('credentials', 'credentials'),
  );
  const scoreIngestServer = await listen(
    scoreIngestModule.app,
    scoreIngestConfig.SCORE_INGEST_PORT,
    scoreIngestConfig.SCORE_INGEST_HOST,
    serverOptions('scoreIngest', 'score-ingest'),
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
      () => scoreIngestModule.stop(),
      () => credentialsModule.stop(),
      () => readApiModule.stop(),
      () => adapters.close(),
    ],
    runtimeConfig.SHUTDOWN_DEADLINE_MS,
  );
}

runMain(main);
