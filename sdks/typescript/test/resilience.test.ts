import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { subscribe } from 'node:diagnostics_channel';
import { join } from 'node:path';
import {
  ApiConnectionError,
  ApiError,
  ApiTimeoutError,
  Client,
  Organization,
  ResilienceScoreError,
  ServiceUnavailable,
  USER_AGENT,
  VERSION,
  type ScoreSubmission,
} from '@resilience-score/client';
import { eventually } from '@rsd/testkit';

/**
 * Time and failure against a misbehaving server on loopback: it stalls (before the headers or halfway
 * through the body), resets connections, answers 502, 503 with Retry-After as seconds and as an HTTP
 * date, 504, and records every attempt with the moment it arrived.
 */

type Behaviour = (req: IncomingMessage, res: ServerResponse, body: string) => void;

interface Attempt {
  method: string;
  path: string;
  at: number;
  body: string;
  userAgent: string | undefined;
}

const SCORE = JSON.stringify({ clientId: 'rs_live_AAAAAAAAAAAAAAAAAAAAAAAAAA', scoreDate: '2026-01-10', score: 72, grade: 'Optimize' });
const CLIENT_ID = 'rs_live_AAAAAAAAAAAAAAAAAAAAAAAAAA';
/** An unsigned token with an `org` claim: the stand-in checks nothing, the client only reads the claim. */
const TOKEN = `e30.${Buffer.from(JSON.stringify({ org: 'org-1', scope: 'authorizations:write scores:write' })).toString('base64url')}.sig`;

let server: Server;
let origin: string;
let attempts: Attempt[];
/** What each attempt gets, in order; the last one repeats. */
let behaviours: Behaviour[];
const sockets = new Set<Socket>();

const stall: Behaviour = () => undefined;
const reset: Behaviour = (req) => req.socket.destroy();
const status =
  (code: number, headers: Record<string, string> = {}, body = ''): Behaviour =>
  (_req, res) =>
    res.writeHead(code, headers).end(body);
const score: Behaviour = status(200, { 'content-type': 'application/json' }, SCORE);
/** The headers and half the body, then nothing. */
const stallHalfway: Behaviour = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(SCORE.length) });
  res.write(SCORE.slice(0, 10));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    // No connection outlives its answer: a test never meets a socket another test's stall left behind.
    res.setHeader('connection', 'close');
    // Counted as it arrives, before its body: an attempt the client gave up on meanwhile still counts.
    const attempt: Attempt = { method: req.method!, path: req.url!, at: performance.now(), body: '', userAgent: req.headers['user-agent'] };
    attempts.push(attempt);
    const behaviour = behaviours[Math.min(attempts.length - 1, behaviours.length - 1)]!;
    req.on('data', (chunk: Buffer) => (attempt.body += chunk.toString('utf8')));
    req.on('end', () => behaviour(req, res, attempt.body));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  attempts = [];
  behaviours = [score];
});

/** fetch's own connections (undici says when it opens one): a test ends once its pool has seen them all closed. */
const pooled = new Set<Socket>();
subscribe('undici:client:connected', (message) => {
  const { socket } = message as { socket: Socket };
  pooled.add(socket);
  socket.once('close', () => pooled.delete(socket));
});

afterEach(async () => {
  jest.restoreAllMocks();
  // The stalled connections of the test that ended, closed on both ends before the next test borrows from the pool.
  for (const socket of sockets) socket.destroy();
  await eventually(() => expect({ pooled: pooled.size, served: sockets.size }).toEqual({ pooled: 0, served: 0 }), { intervalMs: 5 });
});

afterAll(() => new Promise<void>((closed) => server.close(() => closed())));

const aClient = (options: Partial<ConstructorParameters<typeof Client>[0]> = {}) =>
  new Client({
    clientId: CLIENT_ID,
    apiKey: 'rsk_test',
    baseUrl: `${origin}/v1`,
    notifierUrl: `${origin}/v1`,
    verifySignatures: false,
    ...options,
  });

const anOrganization = (options: Partial<ConstructorParameters<typeof Organization>[0]> = {}) =>
  new Organization({ token: TOKEN, credentialsUrl: `${origin}/v1`, ingestUrl: `${origin}/v1`, ...options });

/** The milliseconds between consecutive attempts. */
const waits = () => attempts.slice(1).map((attempt, i) => attempt.at - attempts[i]!.at);

const rejectionOf = (call: Promise<unknown>): Promise<unknown> =>
  call.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );

describe('timeouts', () => {
  test('when the server never answers, then ApiTimeoutError after the client timeout, tried maxRetries more times', async () => {
    behaviours = [stall];
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const started = performance.now();

    const error = await rejectionOf(aClient({ timeout: 500, maxRetries: 2 }).score());

    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(ApiTimeoutError);
    expect(error).toBeInstanceOf(ApiConnectionError);
    expect(error).toBeInstanceOf(ResilienceScoreError);
    expect((error as Error).message).toContain('within 500 ms');
    expect(attempts).toHaveLength(3);
    // A timer never fires early; on a busy machine it may fire late.
    expect(elapsed).toBeGreaterThanOrEqual(3 * 500 - 5);
    expect(elapsed).toBeLessThan(3 * 500 + 3000);
  });

  test('when the body stalls halfway, then that is a timeout too', async () => {
    behaviours = [stallHalfway];

    const error = await rejectionOf(aClient({ timeout: 500, maxRetries: 0 }).score());

    expect(error).toBeInstanceOf(ApiTimeoutError);
    expect(attempts).toHaveLength(1);
  });

  test("when a call sets its own timeout, then it wins over the client's", async () => {
    behaviours = [stall];
    const started = performance.now();

    const error = await rejectionOf(aClient({ timeout: 10_000, maxRetries: 0 }).score({ timeout: 150 }));

    expect(error).toBeInstanceOf(ApiTimeoutError);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test('when the default timeout is not changed, then it is 10 s', async () => {
    behaviours = [stall];
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'performance', 'queueMicrotask'] });
    try {
      const call = rejectionOf(aClient({ maxRetries: 0 }).score());
      await new Promise((arrived) => server.once('request', arrived));
      await jest.advanceTimersByTimeAsync(9_900);
      let settled = false;
      void call.then(() => (settled = true));
      await jest.advanceTimersByTimeAsync(0);
      expect(settled).toBe(false);
      await jest.advanceTimersByTimeAsync(200);
      expect(await call).toBeInstanceOf(ApiTimeoutError);
    } finally {
      jest.useRealTimers();
    }
  });

  test('when a timeout is not a positive number, then TypeError', () => {
    expect(() => aClient({ timeout: 0 })).toThrow(TypeError);
    expect(() => aClient({ maxRetryWait: -1 })).toThrow(TypeError);
  });
});

describe('cancellation', () => {
  test('when the signal aborts during a request, then the call rejects with its reason at once and is not tried again', async () => {
    behaviours = [stall];
    const controller = new AbortController();
    // Aborted once the request has reached the server: during it, whatever the machine's speed.
    server.once('request', () => controller.abort(new Error('the user left')));
    const started = performance.now();

    const error = await rejectionOf(aClient({ timeout: 5000 }).score({ signal: controller.signal }));

    expect((error as Error).message).toBe('the user left');
    expect(error).not.toBeInstanceOf(ResilienceScoreError);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(attempts).toHaveLength(1);
  });

  test('when the signal aborts during the wait before a retry, then the call rejects at once', async () => {
    behaviours = [status(503, { 'retry-after': '30' })];
    const controller = new AbortController();
    const call = rejectionOf(aClient().score({ signal: controller.signal }));
    await new Promise((arrived) => server.once('request', arrived));
    const started = performance.now();

    controller.abort();
    const error = await call;

    expect((error as Error).name).toBe('AbortError');
    expect(performance.now() - started).toBeLessThan(1500);
    expect(attempts).toHaveLength(1);
  });

  test('when the signal has aborted already, then nothing is sent', async () => {
    const error = await rejectionOf(aClient().score({ signal: AbortSignal.abort() }));

    expect((error as Error).name).toBe('AbortError');
    expect(attempts).toHaveLength(0);
  });

  test('when the history is iterated with a signal, then it cancels the page being fetched', async () => {
    behaviours = [stall];
    const controller = new AbortController();
    server.once('request', () => controller.abort());

    const error = await rejectionOf(aClient().history({ signal: controller.signal }).next());

    expect((error as Error).name).toBe('AbortError');
  });
});

describe('retries of a GET', () => {
  test('when connections are reset, then ApiConnectionError (not a timeout) once the retries are spent', async () => {
    behaviours = [reset];
    jest.spyOn(Math, 'random').mockReturnValue(0);

    const error = await rejectionOf(aClient({ maxRetries: 2 }).score());

    expect(error).toBeInstanceOf(ApiConnectionError);
    expect(error).not.toBeInstanceOf(ApiTimeoutError);
    expect(error).toBeInstanceOf(ResilienceScoreError);
    expect((error as Error).cause).toBeDefined();
    expect(attempts).toHaveLength(3);
  });

  test.each([
    ['a reset', reset],
    ['a 502', status(502)],
    ['a 504', status(504)],
    ['a 503', status(503)],
  ])('when %s comes first, then the next try returns the score', async (_name, first) => {
    behaviours = [first, score];
    jest.spyOn(Math, 'random').mockReturnValue(0);

    const served = await aClient().score();

    expect(served.score).toBe(72);
    expect(attempts).toHaveLength(2);
  });

  test('when nothing works, then the waits grow exponentially below their ceilings, each a random share of it (full jitter)', async () => {
    behaviours = [status(502)];
    const draws = [0.9, 0.9, 0.9, 0.2, 0.2, 0.2];
    jest.spyOn(Math, 'random').mockImplementation(() => draws.shift()!);

    const high = await rejectionOf(aClient({ maxRetries: 3 }).score());
    const highWaits = waits();
    attempts = [];
    await rejectionOf(aClient({ maxRetries: 3 }).score());
    const lowWaits = waits();

    expect(high).toBeInstanceOf(ApiError);
    expect((high as ApiError).status).toBe(502);
    // Ceilings 500, 1000, 2000 ms; the draw picks the share. A timer never fires early, and on a busy
    // machine it may fire late: the lower bounds are tight, the upper ones keep the low draws below their ceilings.
    const ceilings = [500, 1000, 2000];
    highWaits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(0.9 * ceilings[i]! - 10));
    highWaits.forEach((wait, i) => expect(wait).toBeLessThan(0.9 * ceilings[i]! + 400));
    lowWaits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(0.2 * ceilings[i]! - 10));
    lowWaits.forEach((wait, i) => expect(wait).toBeLessThan(0.2 * ceilings[i]! + 300));
  });

  test('when the real random draws are used, then the waits differ from run to run and stay below the ceilings', async () => {
    behaviours = [status(504)];
    const runs: number[][] = [];
    for (let run = 0; run < 3; run += 1) {
      attempts = [];
      await rejectionOf(aClient({ maxRetries: 2, maxRetryWait: 400 }).score());
      runs.push(waits());
    }

    for (const run of runs) run.forEach((wait, i) => expect(wait).toBeLessThan([400, 400][i]! + 300));
    expect(new Set(runs.map((run) => run.map((wait) => Math.round(wait / 10)).join())).size).toBeGreaterThan(1);
  });

  test('when a 503 asks for 1 s as seconds, then the client waits that long', async () => {
    behaviours = [status(503, { 'retry-after': '1' }), score];

    await aClient().score();

    expect(waits()[0]).toBeGreaterThanOrEqual(950);
    expect(waits()[0]).toBeLessThan(2000);
  });

  test('when a 503 asks for a time as an HTTP date, then the client waits until then', async () => {
    // Two seconds ahead when it is answered; an HTTP date has whole seconds, so the wait is between 1 and 2 s.
    behaviours = [(req, res, body) => status(503, { 'retry-after': new Date(Date.now() + 2000).toUTCString() })(req, res, body), score];

    await aClient().score();

    expect(waits()[0]).toBeGreaterThanOrEqual(950);
    expect(waits()[0]).toBeLessThan(3000);
  });

  test('when Retry-After asks for an hour, then the wait is capped by maxRetryWait', async () => {
    behaviours = [
      status(503, { 'retry-after': '3600' }),
      status(503, { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() }),
      score,
    ];

    const served = await aClient({ maxRetryWait: 300 }).score();

    expect(served.score).toBe(72);
    for (const wait of waits()) {
      expect(wait).toBeGreaterThanOrEqual(280);
      expect(wait).toBeLessThan(1500);
    }
  });

  test('when the retries are spent on 503, then ServiceUnavailable with the Retry-After it sent', async () => {
    behaviours = [status(503, { 'retry-after': '0' })];

    const error = await rejectionOf(aClient({ maxRetries: 1 }).score());

    expect(error).toBeInstanceOf(ServiceUnavailable);
    expect(attempts).toHaveLength(2);
  });
});

describe('a POST that is not safe to repeat', () => {
  test.each([
    ['a reset', reset, ApiConnectionError],
    ['a 502', status(502), ApiError],
    ['a 504', status(504), ApiError],
    ['a stall', stall, ApiTimeoutError],
  ])('when creating a webhook meets %s, then it is sent once and the error is the SDK’s', async (_name, behaviour, ErrorClass) => {
    behaviours = [behaviour];

    const error = await rejectionOf(aClient({ timeout: 500 }).webhooks.create('https://example.com/hook', ['score.updated']));

    expect(error).toBeInstanceOf(ErrorClass);
    expect(attempts.map((attempt) => attempt.method)).toEqual(['POST']);
  });

  test.each([
    ['creating an authorization', (org: Organization) => org.authorizations.create({ recipientType: 'auditor', scopes: ['qr_score'] })],
    ['rotating a key', (org: Organization) => org.authorizations.rotate('rs_live_x', { overlapSeconds: 0 })],
  ])('when %s meets a reset or a 502, then it is sent once', async (_name, call) => {
    for (const behaviour of [reset, status(502)]) {
      attempts = [];
      behaviours = [behaviour];
      await expect(call(anOrganization())).rejects.toBeInstanceOf(ResilienceScoreError);
      expect(attempts).toHaveLength(1);
    }
  });

  test('when a webhook delete meets a reset, then it is repeated (a DELETE is idempotent)', async () => {
    behaviours = [reset, status(204)];
    jest.spyOn(Math, 'random').mockReturnValue(0);

    await aClient().webhooks.delete('wh_1');

    expect(attempts.map((attempt) => attempt.method)).toEqual(['DELETE', 'DELETE']);
  });
});

describe('the organization: repeatable calls', () => {
  const aScore = (i: number): ScoreSubmission => ({
    organizationId: 'org-1',
    scoreDate: `2026-01-${String((i % 28) + 1).padStart(2, '0')}`,
    score: i % 101,
    grade: 'Improve',
    pillarScores: { structuralIntegrity: 1, failureResistance: 2, deviceHealth: 3, recoveryCapability: 4 },
  });
  const accepted = (_req: IncomingMessage, res: ServerResponse, body: string) =>
    res
      .writeHead(202, { 'content-type': 'application/json' })
      .end(JSON.stringify({ accepted: (JSON.parse(body) as { scores: unknown[] }).scores.length }));

  test('when a batch meets a reset and a 502, then the same batch, byte for byte, is sent again, each score with its calculatedAt', async () => {
    behaviours = [reset, status(502), accepted];
    jest.spyOn(Math, 'random').mockReturnValue(0);

    const published = await anOrganization().publishScores([aScore(1), aScore(2)]);

    expect(published).toEqual({ accepted: 2, batches: 1 });
    expect(attempts.map((attempt) => attempt.path)).toEqual(['/v1/scores', '/v1/scores', '/v1/scores']);
    expect(new Set(attempts.map((attempt) => attempt.body)).size).toBe(1);
    const sent = (JSON.parse(attempts[0]!.body) as { scores: ScoreSubmission[] }).scores;
    expect(sent.every((item) => typeof item.calculatedAt === 'string')).toBe(true);
  });

  test('when a generator yields 2,500 scores, then they go in batches of 1,000, 1,000 and 500, in order', async () => {
    behaviours = [accepted];
    function* scores() {
      for (let i = 0; i < 2500; i += 1) yield aScore(i);
    }

    const published = await anOrganization().publishScores(scores());

    expect(published).toEqual({ accepted: 2500, batches: 3 });
    const batches = attempts.map((attempt) => (JSON.parse(attempt.body) as { scores: ScoreSubmission[] }).scores);
    expect(batches.map((batch) => batch.length)).toEqual([1000, 1000, 500]);
    expect(batches.flat().map((item) => item.score)).toEqual(Array.from({ length: 2500 }, (_, i) => i % 101));
  });

  test('when an async iterable yields the scores and a batch size is given, then it is used', async () => {
    behaviours = [accepted];
    async function* scores() {
      for (let i = 0; i < 5; i += 1) yield await Promise.resolve(aScore(i));
    }

    expect(await anOrganization().publishScores(scores(), { batchSize: 2 })).toEqual({ accepted: 5, batches: 3 });
    await expect(anOrganization().publishScores([], { batchSize: 1001 })).rejects.toThrow(TypeError);
  });

  test('when a revocation meets a reset, then it is sent again (revoking again answers the same record)', async () => {
    behaviours = [reset, status(200, { 'content-type': 'application/json' }, JSON.stringify({ clientId: 'rs_live_x', status: 'revoked' }))];
    jest.spyOn(Math, 'random').mockReturnValue(0);

    const revoked = await anOrganization().authorizations.revoke('rs_live_x');

    expect(revoked.status).toBe('revoked');
    expect(attempts.map((attempt) => attempt.path)).toEqual([
      '/v1/organizations/org-1/authorizations/rs_live_x/revoke',
      '/v1/organizations/org-1/authorizations/rs_live_x/revoke',
    ]);
  });
});

describe('transport and identity', () => {
  test('when the tests run, then the package under test is the one the run names: the installed tarball, or else the sources', () => {
    const installed = process.env.RSD_TS_SDK_PACKAGE;

    expect(require.resolve('@resilience-score/client')).toBe(
      installed ? join(installed, 'dist', 'index.js') : join(__dirname, '..', 'src', 'index.ts'),
    );
  });

  test('when a fetch is given, then every request goes through it', async () => {
    const seen: string[] = [];
    const custom: typeof fetch = (input, init) => {
      seen.push(`${init?.method ?? 'GET'} ${input instanceof Request ? input.url : input.toString()}`);
      return fetch(input, init);
    };

    await aClient({ fetch: custom }).score();
    await anOrganization({ fetch: custom })
      .authorizations.list()
      .catch(() => undefined);

    expect(seen).toEqual([`GET ${origin}/v1/customers/${CLIENT_ID}/score`, `GET ${origin}/v1/organizations/org-1/authorizations`]);
  });

  test("when a request is sent, then its User-Agent names the SDK and the package's version", async () => {
    await aClient().score();
    await anOrganization()
      .authorizations.list()
      .catch(() => undefined);

    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(manifest.version);
    expect(USER_AGENT).toBe(`resilience-score-typescript/${manifest.version}`);
    expect(attempts.map((attempt) => attempt.userAgent)).toEqual([USER_AGENT, USER_AGENT]);
  });
});
