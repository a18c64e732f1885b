import { gzipSync } from 'node:zlib';
import express from 'express';
import pino from 'pino';
import { jsonBody } from './base-app';
import { UnavailableError } from '@rsd/ports';
import { errorHandler } from './http-errors';
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
