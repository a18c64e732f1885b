import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { closeServer, portOf } from './http-server';
import { listenWhileStarting, startingHandler, type StartingState } from './starting';

interface Answer {
  status: number;
  headers: Record<string, string | number>;
  body: string | undefined;
}

/** Calls a request listener with a request and a response that only record what is written: no socket. */
function ask(listener: RequestListener, method: string, url: string, headers: Record<string, string> = {}): Answer {
  const answer: Answer = { status: 0, headers: {}, body: undefined };
  const req = { method, url, headers } as unknown as IncomingMessage;
  const res = {
    writeHead(status: number, written: Record<string, string | number>) {
      answer.status = status;
      answer.headers = written;
      return this;
    },
    end(body?: string) {
      answer.body = body;
      return this;
    },
  } as unknown as ServerResponse;
  void listener(req, res);
  return answer;
}

const json = (answer: Answer) => JSON.parse(answer.body ?? 'null') as Record<string, unknown>;

describe('the starting handler', () => {
  const state: StartingState = { waitingFor: undefined, failedAttempts: 0 };
  const handler = startingHandler(() => state);

  afterEach(() => {
    state.waitingFor = undefined;
    state.failedAttempts = 0;
  });

  test('when the service is starting, then /healthz answers 200: the process is alive', () => {
    const answer = ask(handler, 'GET', '/healthz');

    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ status: 'ok' });
    expect(answer.headers['X-Content-Type-Options']).toBe('nosniff');
  });

  test('when no attempt has failed yet, then /readyz answers 503 in the readiness shape, saying it is starting', () => {
    const answer = ask(handler, 'GET', '/readyz');

    expect(answer.status).toBe(503);
    expect(json(answer)).toEqual({
      status: 'not ready',
      checks: { 'start-up': 'failing' },
      reason: 'starting: the first attempt to reach the dependencies is under way',
    });
    expect(answer.headers['Retry-After']).toBe('5');
  });

  test('when attempts failed waiting for Kafka, then /readyz names Kafka as the failing check, and no error text', () => {
    state.waitingFor = 'kafka';
    state.failedAttempts = 3;

    const answer = ask(handler, 'GET', '/readyz?verbose');

    expect(answer.status).toBe(503);
    expect(json(answer)).toEqual({
      status: 'not ready',
      checks: { kafka: 'failing' },
      reason: 'starting: waiting for kafka (3 failed attempts)',
    });
  });

  test('when any other route is asked, then it answers 503 SERVICE_UNAVAILABLE with the standard error body and the request id', () => {
    const answer = ask(handler, 'POST', '/v1/scores', { 'x-request-id': 'req-42' });

    expect(answer.status).toBe(503);
    expect(json(answer)).toEqual({
      error: 'Service Unavailable',
      code: 'SERVICE_UNAVAILABLE',
      message: 'The service is starting; try again shortly',
      timestamp: expect.any(String),
      requestId: 'req-42',
    });
    expect(answer.headers).toMatchObject({ 'x-request-id': 'req-42', 'Cache-Control': 'no-store', 'Retry-After': '5' });
    expect(answer.headers['Content-Type']).toMatch(/^application\/json/);
  });

  test('when the caller sends a request id that is not a sane token, then a new one is made', () => {
    const answer = ask(handler, 'GET', '/v1/customers/x/score', { 'x-request-id': 'bad id\n' });

    expect(json(answer).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('when asked with HEAD, then the status and headers come without a body', () => {
    const answer = ask(handler, 'HEAD', '/readyz');

    expect(answer.status).toBe(503);
    expect(answer.body).toBeUndefined();
    expect(answer.headers['Content-Length']).toBeGreaterThan(0);
  });
});

describe('the starting server', () => {
  test('when a failed attempt is reported and then the app is served, then /readyz names the dependency until the app answers every request', async () => {
    const starting = await listenWhileStarting(0, '127.0.0.1');
    const url = (path: string) => `http://127.0.0.1:${portOf(starting.server)}${path}`;
    try {
      starting.attemptFailed({ attempt: 2, dependency: 'mongo', reason: 'MongoServerSelectionError: timed out', retryInMs: 500 });
      const waiting = await fetch(url('/readyz'));
      expect(waiting.status).toBe(503);
      expect(await waiting.json()).toMatchObject({ checks: { mongo: 'failing' } });

      const seen: string[] = [];
      starting.serve((req, res) => {
        seen.push(req.url ?? '');
        res.end('served');
      });
      const served = await fetch(url('/readyz'));
      expect(await served.text()).toBe('served');
      expect(seen).toEqual(['/readyz']);
    } finally {
      await closeServer(starting.server);
    }
  });
});
