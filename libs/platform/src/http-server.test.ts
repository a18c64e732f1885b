import { connect } from 'node:net';
import { Agent, IncomingMessage, request as httpRequest, ServerResponse, type RequestListener, type Server } from 'node:http';
import { capturedLog, eventually } from '@rsd/testkit';
import { createBaseApp, finishApp } from './base-app';
import { ConfigError, loadConfig } from './config';
import { closeServer, listen, portOf, serveWith } from './http-server';
import {
  defaultMaxConnections,
  httpServerConfigSchema,
  httpServerLimits,
  openFileLimit,
  type HttpServerLimits,
} from './http-server-config';
import { createLogger } from './logger';
import { listenWhileStarting } from './starting';

const LIMITS: HttpServerLimits = {
  headersTimeoutMs: 300,
  requestTimeoutMs: 300,
  keepAliveTimeoutMs: 5000,
  maxHeaderSize: 16_384,
  maxConnections: 5,
};
// listen() checks open connections every tenth of the headers timeout (at most 1 s).
const CLOSE_BOUND_MS = LIMITS.headersTimeoutMs + LIMITS.headersTimeoutMs / 10;

interface Exchange {
  answer: string;
  /** From connect to the server closing the connection. */
  closedAfterMs: number;
}

/** Writes `send` (and, after `thenMs`, `then`) on one connection and collects everything until the server closes it. */
function exchange(server: Server, send: string, then?: { afterMs: number; send: string }): Promise<Exchange> {
  return new Promise((resolve) => {
    let answer = '';
    let connectedAt = 0;
    const socket = connect(portOf(server), '127.0.0.1', () => {
      connectedAt = performance.now();
      if (send) socket.write(send);
      if (then) setTimeout(() => socket.writable && socket.write(then.send), then.afterMs);
    });
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ answer, closedAfterMs: performance.now() - connectedAt }));
  });
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

describe('the HTTP limits configuration', () => {
  test('when nothing is set, then the documented defaults apply', () => {
    const config = loadConfig(httpServerConfigSchema, {});
    expect(config).toEqual({
      HTTP_HEADERS_TIMEOUT_MS: 10_000,
      HTTP_REQUEST_TIMEOUT_MS: 30_000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 65_000,
      HTTP_MAX_HEADER_SIZE: 16_384,
      HTTP_MAX_CONNECTIONS: defaultMaxConnections(openFileLimit()),
    });
  });

  test('when the descriptor limit is known, then the default cap is half of it, at most 10,000; unknown, half of 1,024', () => {
    expect([20_000, 1024, 256, 1_048_576, undefined].map((limit) => defaultMaxConnections(limit))).toEqual([10_000, 512, 128, 10_000, 512]);
  });

  test('when the variables are set, then they are used, and the embedded runtime’s shares of the cap add up to at most the cap', () => {
    const config = loadConfig(httpServerConfigSchema, {
      HTTP_HEADERS_TIMEOUT_MS: '2000',
      HTTP_REQUEST_TIMEOUT_MS: '3000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '70000',
      HTTP_MAX_HEADER_SIZE: '8192',
      HTTP_MAX_CONNECTIONS: '81',
    });
    expect(httpServerLimits(config)).toEqual({
      headersTimeoutMs: 2000,
      requestTimeoutMs: 3000,
      keepAliveTimeoutMs: 70_000,
      maxHeaderSize: 8192,
      maxConnections: 81,
    });
    expect([0.5, 0.25, 0.25].map((share) => httpServerLimits(config, share).maxConnections)).toEqual([40, 20, 20]);
    expect(httpServerLimits({ ...config, HTTP_MAX_CONNECTIONS: 1 }, 0.25).maxConnections).toBe(1);
  });

  test('when the headers timeout exceeds the request timeout, or the cap is not below the descriptor limit, then the start is refused naming each', () => {
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(httpServerConfigSchema, env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000' })).toEqual([
      'HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS',
    ]);
    expect(problems({ HTTP_MAX_CONNECTIONS: String(openFileLimit()) })).toEqual([
      expect.stringMatching(/^HTTP_MAX_CONNECTIONS: must be below the open-file limit/),
    ]);
    expect(problems({ HTTP_MAX_HEADER_SIZE: '100', HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' })).toHaveLength(2);
  });
});

describe('a server started by listen()', () => {
  let server: Server;
  const { log, lines } = capturedLog();

  beforeAll(async () => {
    const app = createBaseApp({ log: createLogger('test', 'silent') });
    app.get('/things', (_req, res) => void res.json({ ok: true }));
    server = await listen(finishApp(app, log), 0, '127.0.0.1', { limits: LIMITS, log });
  });

  afterAll(async () => {
    server.closeAllConnections();
    await closeServer(server);
  });

  test('when a client never finishes its headers, or sends nothing, then it gets 408 with the error body and nosniff within the bound', async () => {
    const [slow, silent] = await Promise.all([exchange(server, 'GET /things HTTP/1.1\r\nHost: x\r\n'), exchange(server, '')]);
    for (const { answer, closedAfterMs } of [slow, silent]) {
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(answer).toContain('\r\nX-Content-Type-Options: nosniff\r\n');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
        error: 'Request Timeout',
        message: 'The request was not received in time',
        timestamp: expect.any(String),
      });
      expect(closedAfterMs).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs - 20);
      expect(closedAfterMs).toBeLessThan(CLOSE_BOUND_MS + 200);
    }
  });

  test('when the headers are larger than the limit, then it is 431 with the error body and nosniff', async () => {
    const { answer } = await exchange(server, `GET /things HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(LIMITS.maxHeaderSize)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(answer).toContain('\r\nX-Content-Type-Options: nosniff\r\n');
    expect(answer).toContain('"error":"Request Header Fields Too Large"');
  });

  test('when the request is not HTTP, then it is 400 with the error body and nosniff', async () => {
    const { answer } = await exchange(server, 'HELLO\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('\r\nX-Content-Type-Options: nosniff\r\n');
    expect(answer).toContain('"message":"The request is not valid HTTP"');
  });

  test('when a kept-alive connection idles longer than the headers timeout, then it is not closed and serves its next request', async () => {
    const request = 'GET /things HTTP/1.1\r\nHost: x\r\n\r\n';
    const { answer } = await exchange(server, request, {
      afterMs: LIMITS.headersTimeoutMs * 3,
      send: `${request.slice(0, -2)}Connection: close\r\n\r\n`,
    });
    expect(answer.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
  });

  test('when the connections reach the cap, then more are closed at once without an answer, logged once, and served again when they go', async () => {
    const holders = Array.from({ length: LIMITS.maxConnections }, () => connect(portOf(server), '127.0.0.1'));
    await Promise.all(holders.map((socket) => new Promise((resolve) => socket.once('connect', resolve))));
    await eventually(async () => expect(await openConnections(server)).toBe(LIMITS.maxConnections));
    const refused = await Promise.all([1, 2, 3].map(() => exchange(server, 'GET /things HTTP/1.1\r\nHost: x\r\n\r\n')));
    expect(refused.map((r) => r.answer)).toEqual(['', '', '']);
    expect(lines.filter((line) => line.includes('connection cap reached'))).toHaveLength(1);

    for (const socket of holders) socket.destroy();
    await eventually(async () => expect(await openConnections(server)).toBe(0));
    const served = await exchange(server, 'GET /things HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(served.answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });
});

describe('closeServer with a drain', () => {
  const request = 'GET /things HTTP/1.1\r\nHost: x\r\n\r\n';
  /** As a service runs (runServices): listening while it starts, then serving its app. */
  const started = async () => {
    const app = createBaseApp({ log: createLogger('test', 'silent') });
    app.get('/things', (_req, res) => void res.json({ ok: true }));
    const starting = await listenWhileStarting(0, '127.0.0.1', { limits: LIMITS });
    starting.serve(finishApp(app, capturedLog().log));
    return starting.server;
  };
  /** A kept-alive connection with one request answered; resolves with it and what it received. */
  const keptAlive = (server: Server) =>
    new Promise<{ socket: ReturnType<typeof connect>; received: () => string; closed: Promise<void> }>((resolve) => {
      let answer = '';
      const socket = connect(portOf(server), '127.0.0.1', () => socket.write(request));
      const closed = new Promise<void>((done) => socket.on('close', () => done()));
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('utf8');
        if (answer.includes('{"ok":true}')) resolve({ socket, received: () => answer, closed });
      });
    });

  test('when a kept-alive client sends its next request during the drain, then it is answered with Connection: close, its connection is closed by the server and the close ends early', async () => {
    const server = await started();
    const client = await keptAlive(server);
    const t0 = performance.now();
    // The drain begins before closeServer first yields: the request below comes during it.
    const closing = closeServer(server, 5_000);
    client.socket.write(request);
    await client.closed;
    await closing;
    const answers = client.received().split('HTTP/1.1 200 OK').slice(1);
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/\r\nConnection: keep-alive\r\n/i);
    expect(answers[1]).toMatch(/\r\nConnection: close\r\n/i);
    // The deadline under test: the close ends once the connection is gone, well before the 5 s drain.
    expect(performance.now() - t0).toBeLessThan(2_000);
  });

  test('when a kept-alive connection stays idle through the drain, then it is closed once the drain is over, not before', async () => {
    const server = await started();
    const client = await keptAlive(server);
    const t0 = performance.now();
    await closeServer(server, 400);
    await client.closed;
    expect(performance.now() - t0).toBeGreaterThanOrEqual(390);
  });

  test('when keep-alive clients keep sending while the server shuts down, then every request is answered and each client is told to go', async () => {
    const server = await started();
    const port = portOf(server);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    type Outcome = { connection: string | undefined } | { error: string };
    const send = () =>
      new Promise<Outcome>((resolve) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/things', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ connection: res.headers.connection }));
        });
        req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
        req.end();
      });
    try {
      // Four kept-alive connections, each with one request answered.
      await Promise.all([1, 2, 3, 4].map(send));
      const drainMs = 300;
      const closing = closeServer(server, drainMs);
      // Each client sends one request after another, as a busy client does, until it is told to go (it would
      // then open its next connection to another replica) or an answer fails; past the drain it would
      // have met the close of its connection.
      const until = performance.now() + drainMs + 700;
      const clients = await Promise.all(
        [1, 2, 3, 4].map(async () => {
          let last: Outcome = { connection: undefined };
          while (performance.now() < until && 'connection' in last && last.connection !== 'close') last = await send();
          return last;
        }),
      );
      expect(clients).toEqual([1, 2, 3, 4].map(() => ({ connection: 'close' })));
      await closing;
    } finally {
      agent.destroy();
      server.closeAllConnections();
    }
  });
});

describe('the requests and responses of a server started by listen()', () => {
  /** The app, and the prototypes of each request and response as the server made them, before the app saw them. */
  const watched = (app: RequestListener & Partial<Record<'request' | 'response', unknown>>) => {
    const made: [unknown, unknown][] = [];
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      made.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]);
      app(req, res);
    };
    return { listener: Object.assign(listener, { request: app.request, response: app.response }), made };
  };
  const answered = async (server: Server) => (await fetch(`http://127.0.0.1:${portOf(server)}/things`)).json();

  test("when the app is express's, then they are made with its own request and response as their prototypes, and answered by it", async () => {
    const app = createBaseApp({ log: createLogger('test', 'silent') });
    app.get('/things', (_req, res) => void res.json({ ok: true }));
    const { listener, made } = watched(finishApp(app, capturedLog().log));
    const server = await listen(listener, 0, '127.0.0.1', { limits: LIMITS });
    try {
      expect(await answered(server)).toEqual({ ok: true });
      expect(made).toEqual([[app.request, app.response]]);
    } finally {
      await closeServer(server);
    }
  });

  test("when the app has no request and response of node's own kind, then they are node's; and once an express app is served, its own", async () => {
    const plain = watched(
      Object.assign((_req: IncomingMessage, res: ServerResponse) => res.end('{"plain":true}'), { request: {}, response: {} }),
    );
    const server = await listen(plain.listener, 0, '127.0.0.1', { limits: LIMITS });
    try {
      expect(await answered(server)).toEqual({ plain: true });
      expect(plain.made).toEqual([[IncomingMessage.prototype, ServerResponse.prototype]]);

      const app = createBaseApp({ log: createLogger('test', 'silent') });
      app.get('/things', (_req, res) => void res.json({ ok: true }));
      const served = watched(finishApp(app, capturedLog().log));
      serveWith(server, served.listener);

      expect(await answered(server)).toEqual({ ok: true });
      expect(served.made).toEqual([[app.request, app.response]]);
    } finally {
      await closeServer(server);
    }
  });
});
