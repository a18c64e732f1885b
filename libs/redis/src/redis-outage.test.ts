import { createServer, type Socket } from 'node:net';
import express from 'express';
import { MemoryStore, rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { eventually, request, startApp, type RunningApp } from '@rsd/testkit';
import { withLocalFallback } from './local-fallback-store';
import { closeRedisClient, createRedisClient, pingRedis } from './redis-client';
import { redisRateLimitStores } from './redis-rate-limit-store';

interface LogLine {
  level: number;
  msg: string;
}

/** A loopback port nothing listens on: taken from the OS, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Accepts connections on the port and never answers; `close` drops them. */
async function silentListener(port: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/**
 * Disconnecting ioredis between two reconnect attempts leaves a 2 s timer on the dead socket
 * (redis/ioredis#2169), which keeps the test process alive: let the next attempt reach a listener
 * and disconnect while that connection is open.
 */
async function disconnectCleanly(redis: Redis, port: number): Promise<void> {
  const listener = await silentListener(port);
  await new Promise((resolve) => redis.once('connect', resolve));
  const ended = new Promise((resolve) => redis.once('end', resolve));
  await closeRedisClient(redis);
  await ended;
  await listener.close();
}

describe('when Redis is unreachable', () => {
  const lines: LogLine[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  let port: number;
  let redis: Redis;
  let connectionErrors = 0;
  let app: RunningApp | undefined;

  beforeAll(async () => {
    port = await closedPort();
    redis = createRedisClient(`redis://127.0.0.1:${port}`, log);
    redis.on('error', () => (connectionErrors += 1));
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  afterAll(() => disconnectCleanly(redis, port));

  it('then the limiter still limits on this replica, and the fallback is reported once', async () => {
    const reports: boolean[] = [];
    const stores = withLocalFallback(redisRateLimitStores(redis), () => new MemoryStore(), {
      log,
      onFallback: (active) => reports.push(active),
    });
    const limited = express();
    limited.use(rateLimit({ windowMs: 60_000, limit: 3, store: stores('rl:credential:'), keyGenerator: () => 'one-credential' }));
    limited.get('/', (_req, res) => void res.json({ ok: true }));
    app = await startApp(limited);

    const statuses = [];
    for (let n = 0; n < 4; n += 1) statuses.push((await request(app.baseUrl)).status);

    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(reports).toEqual([true]);
  });

  it('then the readiness check fails at once', async () => {
    const startedAt = Date.now();

    await expect(pingRedis(redis)).rejects.toThrow();

    // Well under the 500 ms command timeout: nothing waited for a connection.
    expect(Date.now() - startedAt).toBeLessThan(400);
  });

  it('then connection errors are logged once, not once per reconnect attempt', async () => {
    await eventually(() => expect(connectionErrors).toBeGreaterThanOrEqual(3), { timeoutMs: 5_000, intervalMs: 20 });

    expect(lines.filter((line) => line.msg === 'redis connection error; reconnecting')).toHaveLength(1);
  });
});
