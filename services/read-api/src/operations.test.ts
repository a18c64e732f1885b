import { createServiceMetrics } from '@rsd/observability';
import { request } from '@rsd/testkit';
import { issueCredential, recordScore, testClock } from './testing/read-api-fixtures';
import { startReadApi } from './testing/read-api-harness';

describe('read API metrics', () => {
  test('when customer reads succeed and hit the limit, then /metrics counts them by route template and limiter', async () => {
    const metrics = createServiceMetrics('read-api');
    const running = await startReadApi({
      env: { RATE_LIMIT_PER_MINUTE: '2' },
      clock: testClock('2026-11-21T08:00:00.000Z'),
      operations: { metrics, readiness: [] },
    });
    const { views } = running;
    try {
      await recordScore(views, { organizationId: 'acme' });
      const credential = await issueCredential(views);
      const statuses = [];
      for (let i = 0; i < 3; i += 1) {
        statuses.push(
          (await request(`${running.baseUrl}/v1/customers/${credential.clientId}/score`, { headers: { 'x-api-key': credential.apiKey } }))
            .status,
        );
      }
      expect(statuses).toEqual([200, 200, 429]);

      const text = (await request(`${running.baseUrl}/metrics`)).body as string;
      expect(text).toContain('http_requests_total{method="GET",route="/v1/customers/:clientId/score",status="200",service="read-api"} 2');
      expect(text).toContain('rate_limit_rejections_total{limiter="credential",service="read-api"} 1');
      expect(text).not.toContain(credential.clientId);
    } finally {
      await running.close();
    }
  });
});
