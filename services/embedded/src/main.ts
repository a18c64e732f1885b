import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as credentials from '@rsd/credentials';
import {
  createMemoryReadViews,
  memoryRateLimitStores,
  openFileAuthorizationStore,
  openFileEventLog,
} from '@rsd/embedded';
import {
  ConfigError,
  closeServer,
  createLogger,
  createTokenVerifier,
  listen,
  loadConfig,
  loadOrCreateDevSecret,
  onShutdown,
  portOf,
  runMain,
  signDevToken,
} from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import * as readApi from '@rsd/read-api';
import * as scoreIngest from '@rsd/score-ingest';
import { EMBEDDED_DEFAULTS, embeddedConfigSchema } from './config';
import { welcomeText } from './welcome';

/** The whole product in one process, on in-process adapters, with its event log on disk. */
async function main(): Promise<void> {
  const runtime = loadConfig(embeddedConfigSchema, process.env);
  const dataDir = resolve(runtime.DATA_DIR);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const devSecret = process.env.JWT_HS256_SECRET || process.env.JWT_JWKS_URL ? undefined : await loadOrCreateDevSecret(dataDir);
  const env = { ...EMBEDDED_DEFAULTS, ...(devSecret ? { JWT_HS256_SECRET: devSecret.secret } : {}), ...process.env };
  const [readApiConfig, credentialsConfig, scoreIngestConfig] = loadAll(env);

  const log = createLogger('embedded', runtime.LOG_LEVEL);
  const clock = systemClock;
  const eventLog = await openFileEventLog({ file: join(dataDir, 'events.ndjson'), log: log.child({ component: 'event-log' }) });
  const store = await openFileAuthorizationStore({ file: join(dataDir, 'authorizations.json') });
  const views = createMemoryReadViews();
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
    readApi.buildApp({ config: readApiConfig, views, rateLimitStores: memoryRateLimitStores, clock, log: log.child({ service: 'read-api' }) }),
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
      () => eventLog.close(),
      () => store.close(),
    ],
    runtime.SHUTDOWN_DEADLINE_MS,
  );
}

/** Parses every service's configuration, so that all bad variables are reported together. */
function loadAll(env: NodeJS.ProcessEnv) {
  const problems: string[] = [];
  const attempt = <T>(load: () => T): T | undefined => {
    try {
      return load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return undefined;
    }
  };
  const readApiConfig = attempt(() => loadConfig(readApi.readApiConfigSchema, env));
  const credentialsConfig = attempt(() => loadConfig(credentials.credentialsConfigSchema, env));
  const scoreIngestConfig = attempt(() => loadConfig(scoreIngest.scoreIngestConfigSchema, env));
  if (!readApiConfig || !credentialsConfig || !scoreIngestConfig) throw new ConfigError([...new Set(problems)]);
  return [readApiConfig, credentialsConfig, scoreIngestConfig] as const;
}

runMain(main);
