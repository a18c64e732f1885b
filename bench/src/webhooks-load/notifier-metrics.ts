import { requestJson } from './http';

export interface NotifierMetrics {
  /** `webhook_queue_depth`: sampled by the notifier every 5 s, so up to 5 s old. */
  queueDepth: number | undefined;
  /** `webhook_oldest_pending_seconds`, sampled alike. */
  oldestPendingS: number | undefined;
  /** `webhook_deliveries_total` by outcome. */
  deliveries: Record<string, number>;
}

/** The notifier's own figures, from its Prometheus text at /metrics. */
export async function scrapeNotifier(notifierUrl: string): Promise<NotifierMetrics> {
  const answer = await requestJson<string>(`${notifierUrl}/metrics`);
  if (answer.status !== 200 || typeof answer.body !== 'string') throw new Error(`notifier /metrics: ${answer.status}`);
  const metrics: NotifierMetrics = { queueDepth: undefined, oldestPendingS: undefined, deliveries: {} };
  for (const line of answer.body.split('\n')) {
    const sample = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!sample) continue;
    const [, name, labels, value] = sample;
    if (name === 'webhook_queue_depth') metrics.queueDepth = Number(value);
    if (name === 'webhook_oldest_pending_seconds') metrics.oldestPendingS = Number(value);
    if (name === 'webhook_deliveries_total') {
      const outcome = /outcome="([^"]*)"/.exec(labels ?? '')?.[1] ?? '';
      metrics.deliveries[outcome] = Number(value);
    }
  }
  return metrics;
}

/** `succeeded 10000, failed 0` (every outcome the counter has, in a fixed order first). */
export function formatDeliveries(deliveries: Record<string, number>): string {
  const order = ['succeeded', 'failed', 'gave-up', 'dropped'];
  const outcomes = [...order.filter((outcome) => outcome in deliveries), ...Object.keys(deliveries).filter((o) => !order.includes(o))];
  return outcomes.length === 0
    ? 'none yet'
    : outcomes.map((outcome) => `${outcome} ${deliveries[outcome]!.toLocaleString('en-US')}`).join(', ');
}
