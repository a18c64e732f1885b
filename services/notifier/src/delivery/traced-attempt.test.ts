import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { tracedAttempt } from './traced-attempt';

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor({ exporter });
const tracer = new TracerProvider({ spanProcessors: [processor] }).getTracer('test');
const URL_WITH_TOKEN = 'https://hooks.example.com:8443/in/tok_recipient_secret?sig=query_secret';

async function onlySpan() {
  await processor.forceFlush();
  const spans = exporter.getFinishedSpans();
  exporter.reset();
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

describe('a webhook delivery attempt as a span (decision 39)', () => {
  test('when the receiver answers 204 on a retry, then the CLIENT span has the host, port, resend count and status, never the URL', async () => {
    const outcome = await tracedAttempt(tracer, URL_WITH_TOKEN, 2, () => Promise.resolve({ outcome: 'answered', status: 204 }));

    const span = await onlySpan();
    expect(outcome).toEqual({ outcome: 'answered', status: 204 });
    expect(span).toMatchObject({ name: 'POST', kind: SpanKind.CLIENT, status: { code: SpanStatusCode.UNSET } });
    expect(span.attributes).toEqual({
      'http.request.method': 'POST',
      'server.address': 'hooks.example.com',
      'server.port': 8443,
      'http.request.resend_count': 2,
      'http.response.status_code': 204,
    });
    expect(JSON.stringify(span.attributes)).not.toMatch(/tok_recipient_secret|query_secret|\/in\//);
  });

  test('when the receiver answers 500, then the span is an error of that status', async () => {
    await tracedAttempt(tracer, 'http://127.0.0.1/hooks', 0, () => Promise.resolve({ outcome: 'answered', status: 500 }));

    const span = await onlySpan();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes).toMatchObject({ 'error.type': '500', 'server.port': 80 });
    expect(span.attributes).not.toHaveProperty('http.request.resend_count');
  });

  test('when the attempt times out, then the span is an error of that kind, without the reason', async () => {
    await tracedAttempt(tracer, URL_WITH_TOKEN, 0, () =>
      Promise.resolve({ outcome: 'failed', failure: 'timeout', reason: `no answer from ${URL_WITH_TOKEN}` }),
    );

    const span = await onlySpan();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes['error.type']).toBe('timeout');
    expect(JSON.stringify([span.attributes, span.events])).not.toContain('tok_recipient_secret');
  });

  test("when the delivery is skipped (the receiver's address is outside the grant's allow list), then the span says why and is no error", async () => {
    await tracedAttempt(tracer, URL_WITH_TOKEN, 0, () =>
      Promise.resolve({ outcome: 'skipped', skipped: 'address_not_allowed', reason: 'outside the allow list' }),
    );

    const span = await onlySpan();
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes).toMatchObject({ 'webhook.skipped': 'address_not_allowed' });
    expect(span.attributes).not.toHaveProperty('error.type');
  });
});
