import { createServiceMetrics } from '@rsd/observability';
import { capturedLog, request, startApp } from '@rsd/testkit';
import { requestIds } from './access-log';
import { createBaseApp, finishApp } from './base-app';

describe('the shared front half of every service', () => {
  test('when a request is served, then one access-log line names it without headers or query string', async () => {
    const { log, lines } = capturedLog();
    const app = createBaseApp({ log });
    app.get('/things', (_req, res) => void res.json({ ok: true }));
    const running = await startApp(finishApp(app, log));
    try {
      const answer = await request(`${running.baseUrl}/things?secret=rsk_abc`, {
        headers: { 'x-api-key': 'rsk_abc', 'x-request-id': 'req-42' },
      });
      expect(answer.headers.get('x-request-id')).toBe('req-42');
    } finally {
      await running.close();
    }
    const entry = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((e) => e.msg === 'request completed');
    expect(entry).toMatchObject({ reqId: 'req-42', method: 'GET', url: '/things?[redacted]', status: 200 });
    expect(lines.join('\n')).not.toContain('rsk_abc');
  });

  test('when a request ends in a 503, then its line is a warning; any other 5xx is an error', async () => {
    const { log, lines } = capturedLog();
    const app = createBaseApp({ log });
    app.get('/unavailable', (_req, res) => void res.status(503).json({}));
    app.get('/broken', (_req, res) => void res.status(500).json({}));
    const running = await startApp(finishApp(app, log));
    try {
      await request(`${running.baseUrl}/unavailable`);
      await request(`${running.baseUrl}/broken`);
    } finally {
      await running.close();
    }
    const levels = lines
      .map((line) => JSON.parse(line) as { level: number; url?: string })
      .filter((entry) => entry.url !== undefined)
      .map(({ level, url }) => [url, level]);
    expect(levels).toEqual([
      ['/unavailable', 40],
      ['/broken', 50],
    ]);
  });

  test('when the caller sends no usable request id, then one is made and echoed in errors', async () => {
    const { log } = capturedLog();
    const running = await startApp(finishApp(createBaseApp({ log }), log));
    try {
      const answer = await request(`${running.baseUrl}/nowhere`, { headers: { 'x-request-id': 'bad id with spaces' } });
      expect(answer.status).toBe(404);
      expect(answer.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.headers.get('x-request-id')).toBe(answer.body.requestId);
    } finally {
      await running.close();
    }
  });

  test('when a readiness check fails, then /readyz is 503 naming the check but not its error', async () => {
    const { log } = capturedLog();
    const operations = {
      metrics: createServiceMetrics('test'),
      readiness: [
        { name: 'kafka', check: () => Promise.resolve() },
        { name: 'mongo', check: () => Promise.reject(new Error('connection refused at 10.0.0.7')) },
      ],
    };
    const running = await startApp(finishApp(createBaseApp({ log, operations }), log));
    try {
      const ready = await request(`${running.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'not ready', checks: { kafka: 'ok', mongo: 'failing' } });
      expect((await request(`${running.baseUrl}/healthz`)).status).toBe(200);
      await request(`${running.baseUrl}/rs_secret_client_id/score`);
      const metrics = await request(`${running.baseUrl}/metrics`);
      expect(metrics.body).toContain('http_requests_total{method="GET",route="/readyz",status="503",service="test"} 1');
      expect(metrics.body).toContain('route="unmatched"');
    } finally {
      await running.close();
    }
  });

  test('when the caller sends no request id, then each request gets a new one in the UUID form (RFC 9562, version 8)', () => {
    const [one, other] = [requestIds(), requestIds()];
    const ids = [...Array.from({ length: 1_000 }, one), other()];

    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Each generator draws its own random part: another process's ids are not these.
    expect(other().slice(0, 23)).not.toBe(one().slice(0, 23));
  });
});
