import type { Tracer } from '@opentelemetry/api';
import { Counter, Gauge } from 'prom-client';
import { caughtUpCheck, createServiceMetrics } from '@rsd/observability';
import { QUEUE_SHARDS, shardNames } from '@rsd/domain';
import {
  consoleKeySource,
  CONSOLE_AUDIENCES,
  createTokenVerifier,
  every,
  openLeaseKeeper,
  withConsoleTokens,
  stopInOrder,
  type Logger,
} from '@rsd/platform';
import type { Clock, RunningService, Runtime } from '@rsd/ports';
import { accountAuthenticator, organizationRateLimit, recipientAuthenticator } from '@rsd/recipient-access';
import { buildApp } from './app';
import type { NotifierConfig } from './config';
import { startDeliveryWorker } from './delivery/delivery-worker';
import { systemResolve, webhookSender, type Resolve } from './delivery/send-webhook';
import { NOTIFIER_VIEWS, startNotifierProjection } from './events/plan-deliveries';
import { secretSealer } from './webhooks/secret-sealing';
import { disabledForFailuresRecorder, webhookChangeRecorder } from './webhooks/webhook-changes';
import { grantWebhooks, organizationWebhooks, portfolioWebhooks } from './webhooks/webhook-owners';

export interface NotifierModuleDeps {
  config: NotifierConfig;
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  /** The resolver of the targets' names; the system's unless a test stands in for DNS. */
  resolve?: Resolve;
  /** The retries' jitter (Math.random unless a test fixes it). */
  random?: () => number;
  /** The service's tracer when tracing is on (the runner's): delivery attempts are spans. */
  tracer?: Tracer | undefined;
  /** The runner's: the console of the same process (the embedded runtime), whose public keys verify its tokens. */
  localUrlOf?: (serviceName: string) => string | undefined;
}

const QUEUE_SAMPLE_INTERVAL_MS = 5_000;
const SHARD_PREFIX = 'shard-';

/**
 * The notifier (decisions 26–28): one more consumer of the event log. It keeps its own views (the
 * credentials, to authenticate recipients like the read API does, and the latest scores, to tell a
 * change), queues what each event means for each subscription, and delivers the queue.
 */
export async function createNotifierModule({
  config,
  runtime,
  clock,
  log,
  resolve = systemResolve,
  random,
  tracer,
  localUrlOf,
}: NotifierModuleDeps): Promise<RunningService> {
  const metrics = createServiceMetrics('notifier');
  const registers = [metrics.registry];
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook attempts by outcome',
    labelNames: ['outcome'],
    registers,
  });
  const queueDepth = new Gauge({ name: 'webhook_queue_depth', help: 'Deliveries waiting (first attempts and retries)', registers });
  const oldestPending = new Gauge({
    name: 'webhook_oldest_pending_seconds',
    help: 'How long the delivery due first has been due',
    registers,
  });

  // The runner has resolved it (WEBHOOK_KEY_SECRET): configured, or made in the data directory.
  const consoleKeys = consoleKeySource(config, localUrlOf?.('console'));
  if (!config.JWT_HS256_SECRET && !config.JWT_JWKS_URL) {
    log.warn(
      consoleKeys
        ? 'neither JWT_JWKS_URL nor JWT_HS256_SECRET is set: organizations manage their alert webhooks in the console only (every other token is refused)'
        : 'neither JWT_JWKS_URL nor JWT_HS256_SECRET is set: organizations cannot manage their alert webhooks (every token is refused)',
    );
  }
  const sealer = secretSealer(Buffer.from(config.WEBHOOK_SECRET_KEY ?? '', 'base64'));
  const policy = { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS };
  const { store: views, groupId } = await runtime.openViews('notifier', NOTIFIER_VIEWS);
  const store = await runtime.openWebhookStore();
  const takeovers = new Counter({
    name: 'rsd_webhook_takeover_resumed_total',
    help: 'Deliveries a lost replica may have had under way, attempted again by the replica that took its queue shard over (decision 52)',
    registers,
  });
  // Decision 52: where replicas share the queue, each works the shards it holds the lease of.
  const shardOf = (name: string) => Number(name.slice(SHARD_PREFIX.length));
  let onAcquired: (shard: number, takeover: boolean) => void = () => undefined;
  let onLost: (shard: number) => Promise<void> = () => Promise.resolve();
  const keeper = await openLeaseKeeper(runtime, 'notifier', {
    group: 'notifier-queue',
    names: shardNames(SHARD_PREFIX, QUEUE_SHARDS),
    clock,
    log,
    config,
    onAcquired: (name, _fence, takeover) => onAcquired(shardOf(name), takeover),
    onLost: (name) => onLost(shardOf(name)),
    onHeld: (count) => metrics.leasesHeld.set({ work: 'notifier-queue' }, count),
  });

  const recordChange = webhookChangeRecorder(runtime.eventLog, log);
  const worker = startDeliveryWorker({
    store,
    views,
    sealer,
    send: webhookSender({
      policy,
      timeoutMs: config.WEBHOOK_ATTEMPT_TIMEOUT_MS,
      maxResponseBytes: config.WEBHOOK_RESPONSE_MAX_BYTES,
      resolve,
    }),
    clock,
    log,
    concurrency: config.WEBHOOK_CONCURRENCY,
    pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    attemptsKept: config.WEBHOOK_ATTEMPTS_KEPT,
    onAttempt: (outcome) => deliveries.inc({ outcome }),
    onDisabled: disabledForFailuresRecorder(recordChange),
    ...(keeper
      ? {
          shards: () => new Map([...keeper.held()].map(([name, fence]) => [shardOf(name), fence])),
          onResumed: () => takeovers.inc(),
        }
      : {}),
    ...(random ? { random } : {}),
    tracer,
  });
  onAcquired = (shard, takeover) => {
    if (takeover) worker.tookOver(shard, clock.now());
    worker.nudge();
  };
  onLost = async (shard) => {
    await worker.drain(shard);
  };
  keeper?.start();
  const projection = await startNotifierProjection({
    eventLog: runtime.eventLog,
    views,
    store,
    clock,
    log,
    // The position belongs to the views and the queue it wrote.
    groupId: groupId('notifier'),
    onQueued: () => worker.nudge(),
  });
  const sampler = every(
    QUEUE_SAMPLE_INTERVAL_MS,
    async () => {
      const { depth, oldestDueAt } = await store.queueStats();
      queueDepth.set(depth);
      oldestPending.set(oldestDueAt ? Math.max(0, (clock.now().getTime() - Date.parse(oldestDueAt)) / 1000) : 0);
    },
    { name: 'sampling the webhook queue', log },
  );

  const access = {
    config,
    views,
    rateLimitStores: await runtime.rateLimitStores((active) => metrics.rateLimitFallback.set(active ? 1 : 0)),
    clock,
    log,
    onRateLimited: (limiter: string) => metrics.rateLimitRejections.inc({ limiter }),
  };
  const app = buildApp({
    config,
    log,
    store,
    sealer,
    policy,
    resolve,
    clock,
    attemptsListed: config.WEBHOOK_ATTEMPTS_KEPT,
    onQueued: () => worker.nudge(),
    recordChange,
    // Each kind of owner is one declaration (decision 45): a grant's, a recipient account's (decision 42) and an organization's (decision 44).
    owners: [
      grantWebhooks(recipientAuthenticator(access), config, views),
      portfolioWebhooks(accountAuthenticator(access), config, views),
      organizationWebhooks(
        withConsoleTokens(createTokenVerifier(config), consoleKeys, CONSOLE_AUDIENCES.notifier),
        organizationRateLimit({
          stores: access.rateLimitStores,
          limitPerMinute: config.ORGANIZATION_RATE_LIMIT_PER_MINUTE,
          log,
          onRejected: access.onRateLimited,
        }),
        config,
      ),
    ],
    operations: { metrics, readiness: [...runtime.readiness(), caughtUpCheck(projection.caughtUp)] },
  });

  return {
    app,
    caughtUp: projection.caughtUp,
    // The worker finishes what it has under way, then the leases are released for the other replicas at once.
    stop: stopInOrder(sampler, projection, worker, ...(keeper ? [keeper] : []), store, views),
  };
}
