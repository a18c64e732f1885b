import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MAX_SCORES_PER_BATCH } from '@rsd/contracts';
import { optionsOrExit } from './command-line';
import { cleanUpOnExit, removeDirectory, trackDirectory } from './scale/cleanup';
import { cpuMsOf, machine } from './scale/proc-stats';
import { scrapeNotifier, type NotifierMetrics } from './webhooks-load/notifier-metrics';
import { parseOptions, USAGE, type WebhooksLoadOptions } from './webhooks-load/options';
import { startProduct, type RunningProduct } from './webhooks-load/product';
import { startReceiver, type Receiver } from './webhooks-load/receiver';
import { report, type DrainFigures } from './webhooks-load/report';
import { postScores } from './webhooks-load/scores';
import { subscribeAll, type Subscriber } from './webhooks-load/subscriptions';

// The webhooks' load test, apart from the tests: N subscriptions (one organization, one qr_score
// authorization and one score.updated webhook each, made through the credentials and notifier APIs),
// then one score change per organization through score ingest, and the time from the first post to
// the last delivery at a receiver in this process. The product is the embedded runtime as `npm start`
// runs it, on a fresh data directory; receiver, posts and product share this machine's cores.

const SAMPLE_EVERY_MS = 1_000;
const PROGRESS_EVERY_MS = 5_000;
/** The notifier samples its queue gauge every 5 s: waiting a little longer gives the state after the drain. */
const FINAL_SAMPLE_WAIT_MS = 5_500;

const say = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const options = optionsOrExit(USAGE, parseOptions);
  cleanUpOnExit();
  const startedAt = new Date();
  const heading = [
    `Webhook load test (issue 12): ${options.subscriptions.toLocaleString('en-US')} subscriptions, one score change each`,
    `${await machine()}; node ${process.version}; ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    'Product: the embedded runtime (services/embedded/dist/main.js) on a fresh data directory, LOG_LEVEL=warn, ' +
      'WEBHOOK_ALLOW_PRIVATE_TARGETS=true, everything else as shipped' +
      (Object.keys(options.productEnv).length > 0
        ? `, except ${Object.entries(options.productEnv)
            .map(([name, value]) => `${name}=${value}`)
            .join(', ')}`
        : '') +
      (options.cpuProfileDir ? ' (under --cpu-prof)' : ''),
    `Setup: ${options.setupConcurrency} creates in flight; scores: batches of ${MAX_SCORES_PER_BATCH.toLocaleString('en-US')}, one after the other`,
  ];
  say(`${heading.join('\n')}\n`);

  const dataDir = await mkdtemp(join(tmpdir(), 'rsd-webhooks-load-'));
  trackDirectory(dataDir);
  const receiver = await startReceiver(options.subscriptions, options.verifyEvery);
  const nodeArgs = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(options.cpuProfileDir)}`] : [];
  let product: RunningProduct | undefined;
  try {
    product = await startProduct(dataDir, { env: options.productEnv, nodeArgs });
    say(`product started (pid ${product.pid}); notifier at ${product.urls.notifier}`);

    const setup = await subscribeAll(product.urls, product.devSecret, receiver, {
      run: randomUUID().slice(0, 8),
      count: options.subscriptions,
      concurrency: options.setupConcurrency,
      onProgress: (done) => {
        if (done % 1000 === 0 || done === options.subscriptions) say(`setup: ${done} subscriptions`);
      },
    });
    say(`setup: ${setup.seconds.toFixed(1)} s`);

    const drain = await measureDrain(product, receiver, setup.subscribers, options);
    const text = report({ heading, goalS: options.goalS, setup, drain, problems: product.problems() });
    await product.stop();
    if (options.cpuProfileDir) say(`CPU profile of the product written into ${resolve(options.cpuProfileDir)}`);
    process.stdout.write(`\n${text}\n`);
  } finally {
    await product?.stop();
    await receiver.close();
    removeDirectory(dataDir);
  }
}

async function measureDrain(
  product: RunningProduct,
  receiver: Receiver,
  subscribers: readonly Subscriber[],
  options: WebhooksLoadOptions,
): Promise<DrainFigures> {
  const count = subscribers.length;
  let peakQueueDepth: number | undefined;
  const sampler = setInterval(() => {
    scrapeNotifier(product.urls.notifier).then(
      (metrics) => (peakQueueDepth = Math.max(peakQueueDepth ?? 0, metrics.queueDepth ?? 0)),
      () => undefined,
    );
  }, SAMPLE_EVERY_MS);
  let lastProgress = 0;
  const progress = setInterval(() => {
    const { delivered } = receiver.tally();
    say(`drain: ${delivered} of ${count} delivered (${((delivered - lastProgress) / (PROGRESS_EVERY_MS / 1000)).toFixed(0)}/s)`);
    lastProgress = delivered;
  }, PROGRESS_EVERY_MS);

  const productCpuBefore = await cpuMsOf(product.pid).catch(() => undefined);
  const benchCpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  try {
    // The deadline counts from here; the posts run alongside (a delivery may come before the last 202).
    const drained = receiver.allDelivered(count, options.drainTimeoutMs);
    const crashed = product.ended.then((reason) => Promise.reject(new Error(`the product ${reason} during the drain`)));
    const posted = await Promise.race([postScores(product.urls.scoreIngest, product.devSecret, subscribers), crashed]);
    say(`scores: ${count} posted, last 202 after ${((posted.lastAnsweredAt - posted.firstPostAt) / 1000).toFixed(2)} s`);
    const complete = await Promise.race([drained, crashed]);
    const stoppedWaitingAt = performance.now();
    const wallMs = stoppedWaitingAt - wallBefore;
    const productCpuAfter = await cpuMsOf(product.pid).catch(() => undefined);
    const benchCpu = process.cpuUsage(benchCpuBefore);
    const tally = receiver.tally();

    const latenciesMs: number[] = [];
    const perFiveSeconds: number[] = [];
    for (let index = 0; index < count; index += 1) {
      const at = receiver.receivedAt[index]!;
      if (Number.isNaN(at)) continue;
      latenciesMs.push(at - posted.postedAt[index]!);
      const bucket = Math.floor((at - posted.firstPostAt) / 5_000);
      while (perFiveSeconds.length <= bucket) perFiveSeconds.push(0);
      perFiveSeconds[bucket]! += 1;
    }

    clearInterval(progress);
    say(complete ? 'drain: complete; reading the notifier metrics after its next sample' : 'drain: gave up waiting');
    await new Promise((done) => setTimeout(done, FINAL_SAMPLE_WAIT_MS));
    let metricsAtEnd: NotifierMetrics | undefined;
    try {
      metricsAtEnd = await scrapeNotifier(product.urls.notifier);
    } catch (error) {
      say(`could not read the notifier's metrics: ${error instanceof Error ? error.message : String(error)}`);
    }
    return {
      subscriptions: count,
      batches: Math.ceil(count / MAX_SCORES_PER_BATCH),
      postingS: (posted.lastAnsweredAt - posted.firstPostAt) / 1000,
      batchMs: posted.batchMs,
      drainS: complete && tally.lastAt !== undefined ? (tally.lastAt - posted.firstPostAt) / 1000 : undefined,
      firstDeliveryS: tally.firstAt === undefined ? undefined : (tally.firstAt - posted.firstPostAt) / 1000,
      waitedS: (stoppedWaitingAt - posted.firstPostAt) / 1000,
      latenciesMs,
      perFiveSeconds,
      tally: receiver.tally(),
      verifyEvery: options.verifyEvery,
      peakQueueDepth,
      metricsAtEnd,
      productCpuPercent:
        productCpuBefore !== undefined && productCpuAfter !== undefined ? ((productCpuAfter - productCpuBefore) / wallMs) * 100 : undefined,
      benchCpuPercent: ((benchCpu.user + benchCpu.system) / 1000 / wallMs) * 100,
    };
  } finally {
    clearInterval(sampler);
    clearInterval(progress);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`webhooks-load failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
