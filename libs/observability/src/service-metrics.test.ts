import { createServiceMetrics } from './service-metrics';

describe('service metrics', () => {
  test('when several services share a process, then each exposes its own metrics with its name and the process metrics once, unlabelled', async () => {
    const readApi = createServiceMetrics('read-api');
    const credentials = createServiceMetrics('credentials');
    readApi.rateLimitRejections.inc({ limiter: 'credential' });

    const [readApiText, credentialsText] = await Promise.all([readApi.exposition(), credentials.exposition()]);

    expect(readApiText).toContain('rate_limit_rejections_total{limiter="credential",service="read-api"} 1');
    expect(credentialsText).not.toContain('service="read-api"');
    for (const text of [readApiText, credentialsText]) {
      // One event-loop monitor per process: its series appear once, with no service label.
      expect(text.match(/^# TYPE nodejs_eventloop_lag_p99_seconds gauge$/gm)).toHaveLength(1);
      expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
      expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    }
  });
});
