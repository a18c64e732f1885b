import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import express from 'express';
import pino from 'pino';
import { jsonBody } from './base-app';
import { UnavailableError } from './unavailable';
import { ApiError } from './errors';
import { errorHandler, type ErrorAnswers } from './http-errors';
import { closeServer, listen, portOf } from './http-server';
import { serviceUnavailable } from './service-unavailable';

async function post(headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: { code?: string } }> {
  const app = express();
  app.post('/echo', ...jsonBody('1kb'), (req, res) => {
    res.json(req.body);
  });
  app.use(errorHandler(pino({ level: 'silent' })));
  const server = await listen(app, 0, '127.0.0.1');
  try {
    const response = await fetch(`http://127.0.0.1:${portOf(server)}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: response.status, body: (await response.json()) as { code?: string } };
  } finally {
    await closeServer(server);
  }
}

describe('request body errors', () => {
  test.each(['gzip', 'deflate', 'br'])(
    'when a body claims Content-Encoding %s but does not decompress, then 400 MALFORMED_JSON, not a 500',
    async (encoding) => {
      const response = await post({ 'content-encoding': encoding }, Buffer.from('{"not":"compressed"}'));

      expect([response.status, response.body.code]).toEqual([400, 'MALFORMED_JSON']);
    },
  );

  test('when a gzip body decompresses, then it is read as JSON', async () => {
    const response = await post({ 'content-encoding': 'gzip' }, gzipSync('{"compressed":true}'));

    expect([response.status, response.body]).toEqual([200, { compressed: true }]);
  });
});

describe('errors from the adapters', () => {
  async function get(failure: unknown): Promise<{ status: number; retryAfter: string | null; body: { code?: string; message?: string } }> {
    const app = express();
    app.get('/fails', () => {
      throw failure;
    });
    app.use(errorHandler(pino({ level: 'silent' })));
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const response = await fetch(`http://127.0.0.1:${portOf(server)}/fails`);
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: (await response.json()) as { code?: string },
      };
    } finally {
      await closeServer(server);
    }
  }

  test('when a store is unreachable, then 503 SERVICE_UNAVAILABLE with Retry-After, saying nothing of the store', async () => {
    const response = await get(new UnavailableError('MongoDB', { cause: new Error('connect ECONNREFUSED 127.0.0.1:27018') }));

    expect(response).toMatchObject({ status: 503, retryAfter: '5', body: { code: 'SERVICE_UNAVAILABLE' } });
    expect(JSON.stringify(response.body)).not.toMatch(/MongoDB|ECONNREFUSED|27018/);
  });

  test('when a handler refuses with its own 503, then it says when to retry: its own bound where it gives one, else 5 seconds', async () => {
    const ownBound = await get(serviceUnavailable('This replica is behind; retry shortly', { retryAfterS: 12 }));
    const standard = await get(serviceUnavailable('Busy; try again'));

    expect(ownBound).toMatchObject({
      status: 503,
      retryAfter: '12',
      body: { code: 'SERVICE_UNAVAILABLE', message: 'This replica is behind; retry shortly' },
    });
    expect(standard).toMatchObject({ status: 503, retryAfter: '5', body: { code: 'SERVICE_UNAVAILABLE', message: 'Busy; try again' } });
  });

  test('when anything else fails, then it is still a 500 INTERNAL_ERROR without internals', async () => {
    const response = await get(new Error('a bug'));

    expect(response).toMatchObject({ status: 500, body: { code: 'INTERNAL_ERROR' } });
    expect(JSON.stringify(response.body)).not.toContain('a bug');
  });
});

describe('a route group that answers people (its own words, its page)', () => {
  const answers: ErrorAnswers = {
    messages: { MALFORMED_JSON: 'The form could not be read.', SERVICE_UNAVAILABLE: 'Try again in a moment.' },
    page: (error, res) => (res.locals.wantsPage === true ? `<h1>${error.code}</h1><p>${error.message}</p>` : undefined),
  };

  /** One GET of a route that fails with `failure`, answered by the middleware configured with `answers`. */
  async function fail(failure: unknown, wantsPage: boolean) {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = pino({ level: 'warn' }, destination);
    const app = express();
    app.get('/claim/:token', (_req, res) => {
      res.locals.wantsPage = wantsPage;
      res.locals.loggedUrl = '/claim/[redacted]';
      throw failure;
    });
    app.use(errorHandler(log, answers));
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const response = await fetch(`http://127.0.0.1:${portOf(server)}/claim/secret-token`);
      return { status: response.status, headers: response.headers, body: await response.text(), logs: lines.join('') };
    } finally {
      await closeServer(server);
    }
  }

  test('when the middleware names the error itself, then it speaks in the route group’s words; a thrown ApiError keeps its own', async () => {
    const parserRefusal = await fail(
      Object.assign(new SyntaxError('Unexpected end of JSON input'), { status: 400, type: 'entity.parse.failed' }),
      false,
    );
    const thrown = await fail(new ApiError('MALFORMED_JSON', 'The handler’s own message'), false);

    expect(parserRefusal.status).toBe(400);
    expect(JSON.parse(parserRefusal.body)).toMatchObject({ code: 'MALFORMED_JSON', message: 'The form could not be read.' });
    expect(JSON.parse(thrown.body)).toMatchObject({ code: 'MALFORMED_JSON', message: 'The handler’s own message' });
  });

  test('when the request wants the page and a store is unreachable, then the page is a 503 with Retry-After and the route’s words', async () => {
    const answer = await fail(new UnavailableError('mongo'), true);

    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(answer.body).toBe('<h1>SERVICE_UNAVAILABLE</h1><p>Try again in a moment.</p>');
  });

  test('when the request leaves the page to the JSON body, then it is the documented JSON error, with the headers the error carries', async () => {
    const answer = await fail(new ApiError('METHOD_NOT_ALLOWED', 'PUT is not allowed here; use GET', undefined, { Allow: 'GET' }), false);

    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET');
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'METHOD_NOT_ALLOWED', message: 'PUT is not allowed here; use GET' });
  });

  test('when the route names what to log for its path, then the log has that and never the path itself', async () => {
    const unavailable = await fail(new UnavailableError('mongo'), true);
    const defect = await fail(new Error('a bug'), true);

    expect(unavailable.logs).toContain('"path":"/claim/[redacted]"');
    expect(defect.logs).toContain('"path":"/claim/[redacted]"');
    expect(defect.body).toBe('<h1>INTERNAL_ERROR</h1><p>An unexpected error occurred</p>');
    expect(unavailable.logs + defect.logs).not.toContain('secret-token');
  });
});
