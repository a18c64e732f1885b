import { percentile } from '../scale/percentiles';
import { formatDeliveries, type NotifierMetrics } from './notifier-metrics';
import type { LoggedProblem } from './product';
import type { ReceiverTally } from './receiver';
import type { SetupFigures } from './subscriptions';

export interface DrainFigures {
  subscriptions: number;
  batches: number;
  /** First post to last 202, s. */
  postingS: number;
  batchMs: number[];
  /** First post to last delivery, s; undefined when not every subscription had its delivery in time. */
  drainS: number | undefined;
  /** First post to the first delivery, s. */
  firstDeliveryS: number | undefined;
  /** First post to when the bench stopped waiting, s (the drain, or the timeout). */
  waitedS: number;
  /** Per delivered organization: received − its batch posted, ms. */
  latenciesMs: number[];
  /** Deliveries per 5 s from the first post. */
  perFiveSeconds: number[];
  tally: ReceiverTally;
  verifyEvery: number;
  peakQueueDepth: number | undefined;
  metricsAtEnd: NotifierMetrics | undefined;
  /** CPU time over the drain, % of one core. */
  productCpuPercent: number | undefined;
  benchCpuPercent: number;
}

export interface ReportInput {
  heading: string[];
  goalS: number;
  setup: SetupFigures;
  drain: DrainFigures;
  problems: LoggedProblem[];
}

const n = (value: number, decimals = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals }) : 'n/a';
const ms = (samples: readonly number[], q: number) => n(percentile(samples, q), 1);
const s = (samples: readonly number[], q: number) => n(percentile(samples, q) / 1000, 2);

export function report({ heading, goalS, setup, drain, problems }: ReportInput): string {
  const { tally } = drain;
  const met = drain.drainS !== undefined && drain.drainS < goalS;
  const seconds = drain.drainS ?? drain.waitedS;
  const lines = [
    ...heading,
    '',
    'Setup (not part of the drain)',
    '',
    '| measurement | value |',
    '|---|---:|',
    `| subscriptions made (organizations, each one qr_score authorization and one score.updated webhook) | ${n(setup.subscribers.length)} |`,
    `| setup time, s | ${n(setup.seconds, 1)} |`,
    `| setup rate, subscriptions/s | ${n(setup.subscribers.length / setup.seconds, 0)} |`,
    `| POST …/authorizations p50 / p99, ms | ${ms(setup.authorizationMs, 0.5)} / ${ms(setup.authorizationMs, 0.99)} |`,
    `| POST …/webhooks p50 / p99, ms | ${ms(setup.webhookMs, 0.5)} / ${ms(setup.webhookMs, 0.99)} |`,
    `| webhook creates answered 401 and tried again | ${n(setup.webhookRetries)} |`,
    '',
    `Drain: one score change per organization, posted in ${drain.batches} batch${drain.batches === 1 ? '' : 'es'} of up to 1,000`,
    '',
    '| measurement | value |',
    '|---|---:|',
    `| scores posted: first post → last 202, s | ${n(drain.postingS, 2)} |`,
    `| score batch, send → 202, p50 / max, ms | ${ms(drain.batchMs, 0.5)} / ${ms(drain.batchMs, 1)} |`,
    drain.drainS === undefined
      ? `| first post → last delivery, s | not drained: gave up after ${n(drain.waitedS, 1)} |`
      : `| first post → last delivery, s | ${n(drain.drainS, 2)} |`,
    `| deliveries/s (first post → last delivery) | ${n(tally.delivered / seconds, 0)} |`,
    `| under ${goalS} s (issue 12) | ${met ? 'yes' : '**no**'} |`,
    `| delivery latency (received − its batch sent) p50 / p99 / max, s | ${s(drain.latenciesMs, 0.5)} / ${s(drain.latenciesMs, 0.99)} / ${s(drain.latenciesMs, 1)} |`,
    `| first delivery after the first post, s | ${drain.firstDeliveryS === undefined ? '–' : n(drain.firstDeliveryS, 2)} |`,
    `| organizations that had their delivery / expected | ${n(tally.delivered)} / ${n(drain.subscriptions)} |`,
    `| requests received (every attempt) | ${n(tally.requests)} |`,
    `| webhook-id received twice / a second message for one organization | ${n(tally.duplicateIds)} / ${n(tally.extraPerOrganization)} |`,
    `| requests not the expected score.updated for their subscription | ${n(tally.malformed)} |`,
    `| signatures checked (one in ${drain.verifyEvery}) / not verifying | ${n(tally.signaturesChecked)} / ${n(tally.signaturesBad)} |`,
    `| notifier webhook_queue_depth at the end (its 5-s sample) / peak seen | ${n(drain.metricsAtEnd?.queueDepth ?? NaN)} / ${n(drain.peakQueueDepth ?? NaN)} |`,
    `| notifier webhook_deliveries_total at the end | ${drain.metricsAtEnd ? formatDeliveries(drain.metricsAtEnd.deliveries) : '–'} |`,
    `| product CPU over the drain, % of one core | ${n(drain.productCpuPercent ?? NaN)} |`,
    `| bench process CPU over the drain (receiver and posts), % of one core | ${n(drain.benchCpuPercent)} |`,
    '',
    `Deliveries per 5 s from the first post: ${drain.perFiveSeconds.map((count) => n(count)).join(', ') || 'none'}`,
  ];
  if (problems.length > 0) {
    lines.push('', 'The product logged (warnings and errors, by message):', '');
    for (const problem of problems) lines.push(`- ${problem.count} × [${problem.level}] ${problem.msg}: ${JSON.stringify(problem.first)}`);
  }
  return lines.join('\n');
}
