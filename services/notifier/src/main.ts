import {
  closeServer,
  createLogger,
  httpServerConfigSchema,
  httpServerLimits,
  listenWhileStarting,
  loadConfigs,
  onShutdown,
  runMain,
  startWithRetries,
} from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import { dependencyOf, openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import { notifierConfigSchema } from './config';
import { createNotifierModule } from './notifier-module';
import { assertWebhookSecretKeyConfigured } from './webhooks/secret-sealing';

/**
 * The notifier: webhooks for recipients (decisions 26–28). It listens at once and waits for Kafka,
 * MongoDB and Redis. Run one replica: the delivery queue has one worker (docs/decisions.md).
 */
async function main(): Promise<void> {
  const [service, runtimeSettings, http] = loadConfigs(
    [
      notifierConfigSchema,
      runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo', 'redis'] }),
      httpServerConfigSchema,
    ],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  // Before anything connects: a missing or malformed key is no reason to wait for Kafka.
  assertWebhookSecretKeyConfigured(config.WEBHOOK_SECRET_KEY, config.RUNTIME);
  const log = createLogger('notifier', config.LOG_LEVEL);
  const server = await listenWhileStarting(config.NOTIFIER_PORT, config.NOTIFIER_HOST, { limits: httpServerLimits(http), log });
  log.info({ port: config.NOTIFIER_PORT, runtime: config.RUNTIME }, 'notifier accepting connections while it starts');

  const start = startWithRetries(
    async (scope) => {
      const runtime = await openRuntime(config, 'notifier', log);
      scope.closeOnStop(() => runtime.close());
      const notifier = await createNotifierModule({ config, runtime, clock: systemClock, log });
      scope.closeOnStop(() => notifier.stop());
      return notifier.app;
    },
    { log, deadlineMs: config.START_DEADLINE_MS, dependencyOf, onFailedAttempt: (failure) => server.attemptFailed(failure) },
  );
  onShutdown(log, [() => closeServer(server.server), () => start.stop()], config.SHUTDOWN_DEADLINE_MS);

  server.serve(await start.started);
  log.info({ port: config.NOTIFIER_PORT, runtime: config.RUNTIME }, 'notifier started and listening');
}

runMain(main);
