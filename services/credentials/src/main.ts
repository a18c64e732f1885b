import { createServiceMetrics } from '@rsd/observability';
import { closeServer, createLogger, createTokenVerifier, listen, loadConfigs, onShutdown, runMain } from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import { buildApp } from './app';
import { credentialsConfigSchema } from './config';
import { createExpiryScheduler } from './expiry/expiry-scheduler';
import { createOutboxRelay } from './outbox/outbox-relay';

/** The credentials service: authorizations in its own store, their events relayed to the event log. */
async function main(): Promise<void> {
  const [service, runtimeSettings] = loadConfigs(
    [credentialsConfigSchema, runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo'] })],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  const log = createLogger('credentials', config.LOG_LEVEL);
  const clock = systemClock;
  const runtime = await openRuntime(config, 'credentials', log);
  const store = await runtime.openAuthorizationStore();

  // Events still owed from before a restart (or a Kafka outage) go out first.
  const relay = createOutboxRelay({ store, eventLog: runtime.eventLog, log });
  await relay.flush().catch((error: unknown) => log.warn({ err: error }, 'outbox not yet flushed; the relay keeps trying'));
  relay.start(config.OUTBOX_RELAY_INTERVAL_MS);
  const expiry = createExpiryScheduler({ store, relay, clock, log });
  expiry.start(config.EXPIRY_CHECK_INTERVAL_MS);

  const app = buildApp({
    config,
    store,
    relay,
    clock,
    log,
    verifyToken: createTokenVerifier(config),
    operations: { metrics: createServiceMetrics('credentials'), readiness: runtime.readiness() },
  });
  const server = await listen(app, config.CREDENTIALS_PORT, config.CREDENTIALS_HOST);
  log.info({ port: config.CREDENTIALS_PORT, runtime: runtime.kind }, 'credentials service listening');

  onShutdown(
    log,
    [() => closeServer(server), () => expiry.stop(), () => relay.stop(), () => store.close(), () => runtime.close()],
    config.SHUTDOWN_DEADLINE_MS,
  );
}

runMain(main);
