import express from 'express';
import { MemoryStore, rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import pino from 'pino';
import type { RateLimitStore, RateLimitStoreFactory } from '@rsd/ports';
import {
  describeRateLimitStoreContract,
  describeWithInfra,
  eventually,
  request,
  startApp,
  startInfra,
  uniqueName,
  type RunningApp,
  type StartedServer,
} from '@rsd/testkit';
import { withLocalFallback } from './local-fallback-store';
import { closeRedisClient, createRedisClient, pingRedis } from './redis-client';
import { redisRateLimitStores } from './redis-rate-limit-store';

type InitOptions = Parameters<NonNullable<RateLimitStore['init']>>[0];
const WINDOW = { windowMs: 60_000 } as InitOptions;
const silent = pino({ level: 'silent' });

/** A client as the services build it, once Redis has answered (commands fail fast before that). */
async function connectedClient(url: string): Promise<Redis> {
  const redis = createRedisClient(url, silent);
  await eventually(() => pingRedis(redis), { timeoutMs: 10_000, intervalMs: 20 });
  return redis;
}

/** Every key of this run lives under one prefix, so runs never share counters and cleanup is one scan. */
function underRunPrefix(runPrefix: string, stores: RateLimitStoreFactory): RateLimitStoreFactory {
  return (prefix) => stores(`${runPrefix}${prefix}`);
}

async function deleteKeys(redis: Redis, runPrefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${runPrefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** A read-API replica in miniature: one limiter on one route, counting into the given stores. */
async function startReplica(stores: RateLimitStoreFactory): Promise<RunningApp> {
  const app = express();
  app.use(rateLimit({ windowMs: 60_000, limit: 120, store: stores('rl:credential:'), keyGenerator: () => 'one-credential' }));
  app.get('/', (_req, res) => void res.json({ ok: true }));
  return startApp(app);
}

describeWithInfra('redis', 'Redis rate-limit stores', (target) => {
  const runPrefix = `${uniqueName('rl-test')}:`;
  let server: StartedServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startInfra('redis', target());
    redis = await connectedClient(server.url);
  }, 120_000);

  afterAll(async () => {
    await deleteKeys(redis, runPrefix);
    await closeRedisClient(redis);
    await server.stop();
  });

  describeRateLimitStoreContract('redisRateLimitStores', () =>
    Promise.resolve({ stores: underRunPrefix(runPrefix, redisRateLimitStores(redis)), cleanup: () => Promise.resolve() }),
  );

  it('when a key was never counted, then get answers undefined as MemoryStore does; once counted, its hits', async () => {
    const store = underRunPrefix(runPrefix, redisRateLimitStores(redis))(uniqueName('get'));
    await store.init?.(WINDOW);

    const before = await store.get?.('client');
    await store.increment('client');
    const after = await store.get?.('client');

    expect(before).toBeUndefined();
    expect(after?.totalHits).toBe(1);
  });

  it('when the limiter is built before the client has connected, then the first count still reaches Redis', async () => {
    const early = createRedisClient(server.url, silent);
    try {
      const store = underRunPrefix(runPrefix, redisRateLimitStores(early))(uniqueName('early'));
      await store.init?.(WINDOW);
      await eventually(() => pingRedis(early), { timeoutMs: 10_000, intervalMs: 20 });

      const { totalHits } = await store.increment('client');

      expect(totalHits).toBe(1);
    } finally {
      await closeRedisClient(early);
    }
  });

  it('when many counts are asked in one turn, then one call carries them all and each key counts its own hits in order', async () => {
    const client = await connectedClient(server.url);
    try {
      const store = underRunPrefix(runPrefix, redisRateLimitStores(client))(uniqueName('turn'));
      await store.init?.(WINDOW);
      // The script is in Redis after a first count (EVALSHA, else EVAL once).
      await store.increment('warm-up');
      const sent = jest.spyOn(client, 'sendCommand');

      const counts = await Promise.all([...Array.from({ length: 30 }, () => store.increment('busy')), store.increment('quiet')]);

      expect(sent).toHaveBeenCalledTimes(1);
      expect(counts.map(({ totalHits }) => totalHits)).toEqual([...Array.from({ length: 30 }, (_, n) => n + 1), 1]);
      for (const { resetTime } of counts) expect(resetTime!.getTime()).toBeGreaterThan(Date.now());
    } finally {
      await closeRedisClient(client);
    }
  });

  describe('with a local fallback', () => {
    let reports: boolean[] = [];

    describeRateLimitStoreContract('withLocalFallback(redis, memory)', () => {
      reports = [];
      const stores = withLocalFallback(underRunPrefix(runPrefix, redisRateLimitStores(redis)), () => new MemoryStore(), {
        log: silent,
        onFallback: (active) => reports.push(active),
      });
      // Redis answered every call: the contract held on the shared counts, not on the fallback.
      const cleanup = () => {
        expect(reports).toEqual([]);
        return Promise.resolve();
      };
      return Promise.resolve({ stores, cleanup });
    });
  });

  describe('across two replicas', () => {
    let replicaClients: Redis[];
    let apps: RunningApp[] = [];

    beforeAll(async () => {
      replicaClients = await Promise.all([connectedClient(server.url), connectedClient(server.url)]);
    });

    afterEach(async () => {
      await Promise.all(apps.map((app) => app.close()));
      apps = [];
    });

    afterAll(async () => {
      await Promise.all(replicaClients.map((client) => closeRedisClient(client)));
    });

    function replicaStores(): RateLimitStoreFactory[] {
      return replicaClients.map((client) => underRunPrefix(runPrefix, redisRateLimitStores(client)));
    }

    it('when both count the same key, then they share one counter and no hit is lost', async () => {
      const prefix = uniqueName('shared');
      const stores = replicaStores().map((factory) => factory(prefix));
      for (const store of stores) await store.init?.(WINDOW);

      const counts = await Promise.all(Array.from({ length: 200 }, (_, n) => Promise.resolve(stores[n % 2]!.increment('one-credential'))));

      expect(Math.max(...counts.map(({ totalHits }) => totalHits))).toBe(200);
      expect(new Set(counts.map(({ totalHits }) => totalHits)).size).toBe(200);
    });

    it('when requests are spread over both, then the limit holds across them: 120 of 200 admitted', async () => {
      const limiterPrefix = `${uniqueName('http')}:`;
      apps = await Promise.all(replicaStores().map((factory) => startReplica((prefix) => factory(`${limiterPrefix}${prefix}`))));

      const statuses: number[] = [];
      for (let batch = 0; batch < 10; batch += 1) {
        const responses = await Promise.all(Array.from({ length: 20 }, (_, n) => request(apps[n % 2]!.baseUrl)));
        statuses.push(...responses.map((response) => response.status));
      }

      expect(statuses.filter((status) => status === 200)).toHaveLength(120);
      expect(statuses.filter((status) => status === 429)).toHaveLength(80);
    });
  });
});
