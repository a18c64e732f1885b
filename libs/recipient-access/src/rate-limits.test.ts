import express, { type Request, type Response } from 'express';
import { MemoryStore, rateLimit } from 'express-rate-limit';
import pino from 'pino';
import { ApiError } from '@rsd/platform';
import { request, startApp, type RunningApp } from '@rsd/testkit';
import { credentialRateLimit, failedAuthenticationLimit } from './rate-limits';

const log = pino({ level: 'silent' });
const LIMIT = 3;

/**
 * The same requests through express-rate-limit writing its own draft 8 headers, and through our
 * limiters, which write them themselves: the headers must be the library's, character for character.
 */
async function library(identifier: string, key: (req: Request) => string): Promise<RunningApp> {
  const app = express();
  app.set('trust proxy', false);
  app.use(
    rateLimit({
      windowMs: 60_000,
      limit: LIMIT,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      identifier,
      keyGenerator: key,
      store: new MemoryStore(),
      retryAfter: (req: Request) => {
        const info = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit;
        return Math.max(1, Math.ceil(((info?.resetTime?.getTime() ?? Date.now() + 60_000) - Date.now()) / 1000));
      },
      handler: (_req, res) => res.status(429).end(),
    }),
  );
  app.get('/:clientId', (_req, res) => res.status(200).end());
  return startApp(app);
}

async function ours(check: (req: Request, res: Response) => Promise<{ outcome: string; refusal?: ApiError }>): Promise<RunningApp> {
  const app = express();
  app.set('trust proxy', false);
  app.get('/:clientId', async (req, res) => {
    const verdict = await check(req, res);
    if (verdict.refusal) {
      for (const [name, value] of Object.entries(verdict.refusal.headers ?? {})) res.setHeader(name, value);
      res.status(429).end();
    } else res.status(200).end();
  });
  return startApp(app);
}

const HEADERS = ['ratelimit', 'ratelimit-policy', 'retry-after'];

async function headersOf(running: RunningApp, path: string): Promise<Record<string, string | null>[]> {
  const answers = [];
  for (let i = 0; i < LIMIT + 2; i += 1) {
    const response = await request(`${running.baseUrl}${path}`);
    answers.push(Object.fromEntries([['status', String(response.status)], ...HEADERS.map((name) => [name, response.headers.get(name)])]));
  }
  return answers;
}

describe('the limiters write the draft 8 headers express-rate-limit would', () => {
  const running: RunningApp[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((app) => app.close()));
  });

  test('the credential limiter: RateLimit, RateLimit-Policy with its partition key, and Retry-After once over the limit', async () => {
    const limiter = credentialRateLimit({ stores: () => new MemoryStore(), limitPerMinute: LIMIT, log });
    const theirs = await library('credential', (req) => req.path.slice(1));
    const mine = await ours((req, res) => limiter(req, res, String(req.params.clientId)));
    running.push(theirs, mine);

    const expected = await headersOf(theirs, '/rs_ABCDEFGHIJKLMNOP1234');
    const actual = await headersOf(mine, '/rs_ABCDEFGHIJKLMNOP1234');

    expect(expected.map((answer) => answer.status)).toEqual(['200', '200', '200', '429', '429']);
    expect(expected[0]?.['ratelimit-policy']).toMatch(/^"credential"; q=3; w=60; pk=:[A-Za-z0-9+/=]+:$/);
    expect(actual).toEqual(expected);
  });

  test('the failed-authentication limiter, keyed by the address', async () => {
    const limiter = failedAuthenticationLimit({ stores: () => new MemoryStore(), limitPerMinute: LIMIT, log });
    const theirs = await library('failed-auth', (req) => req.ip ?? '');
    const mine = await ours(limiter);
    running.push(theirs, mine);

    expect(await headersOf(mine, '/x')).toEqual(await headersOf(theirs, '/x'));
  });
});
