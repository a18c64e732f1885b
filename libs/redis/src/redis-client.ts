import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { systemClock } from '@rsd/platform';
import type { Clock } from '@rsd/ports';
import { INCREMENT_EACH_COMMAND } from './increments-per-turn';

export interface RedisClientOptions {
  /** Paces the connection-error log lines. */
  clock?: Clock;
  /** TLS and the ACL user, for the server or every node of a cluster (REDIS_TLS, REDIS_USERNAME, REDIS_PASSWORD). */
  connection?: RedisConnectionSecurity;
}

/** ioredis's `tls` (verified: see TlsOptions), `username` and `password`. */
export interface RedisConnectionSecurity {
  tls?: ConnectionOptions;
  username?: string;
  password?: string;
}

/** While Redis stays unreachable, one error line per this interval instead of one per reconnect attempt. */
const ERROR_LOG_INTERVAL_MS = 30_000;

/** Reconnect at once, then back off doubling up to this cap, and never give up. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * An ioredis client for the request path: a request must never wait on an absent Redis. Commands
 * fail at once while disconnected (no offline queue), a reply slower than half a second fails the
 * command, and a connection that stops answering is dropped and dialled again, so callers see
 * fast errors and can fall back instead of piling up.
 */
export function createRedisClient(url: string, log: Logger, { clock = systemClock, connection }: RedisClientOptions = {}): Redis {
  const redis = new Redis(url, {
    ...connection,
    lazyConnect: false,
    enableOfflineQueue: false,
    // Every read counts a hit: the commands issued in one turn of the event loop go out in one write
    // instead of one system call each, which would be a large share of a distributed read's CPU.
    enableAutoPipelining: true,
    // The rate-limit counts gather a turn's hits in one call themselves, at the turn's end: through the
    // auto-pipeline that call would wait for the end of the next turn.
    autoPipeliningIgnoredCommands: [INCREMENT_EACH_COMMAND],
    maxRetriesPerRequest: 1,
    connectTimeout: 1_000,
    commandTimeout: 500,
    // A connection that answers nothing for a second while commands wait is treated as dead.
    socketTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(100 * 2 ** (attempt - 1), MAX_RECONNECT_DELAY_MS),
  });
  logConnectionState(redis, log.child({ component: 'redis' }), clock);
  return redis;
}

/** One Redis server (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES): what the limiters count in. */
export type RedisConnection = Redis | Cluster;

/**
 * An ioredis Cluster client with the request path's settings of createRedisClient on every node's
 * connection. While a primary is away and its replica not yet promoted, a command for its slots fails
 * within a few hundred milliseconds (a few quick retries while the slot map is read again), so the
 * limiters fall back to counting locally instead of holding requests; after the failover, the moved
 * slots are followed.
 */
export function createRedisClusterClient(
  nodes: readonly { host: string; port: number }[],
  log: Logger,
  { clock = systemClock, connection }: RedisClientOptions = {},
): Cluster {
  const cluster = new Cluster([...nodes], {
    enableOfflineQueue: false,
    // No auto-pipelining: ioredis groups a Cluster's auto-pipelined commands by the slot of their first
    // argument, which for EVALSHA is the script's hash, not the key, so a pipeline can mix slots of
    // several primaries and fail whole ("All keys in the pipeline should belong to the same slots
    // allocation group", redis/ioredis#2109): every such failure made a replica count alone.
    enableAutoPipelining: false,
    // Writes and reads of a counter go to its slot's primary: a replica may be behind.
    scaleReads: 'master',
    // A command follows at most a few MOVED or failover retries, 100 ms apart, then fails.
    maxRedirections: 4,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: 1_000,
    // The slot map is read again now and then, so a failover nobody's command met is noticed too.
    slotsRefreshInterval: 5_000,
    clusterRetryStrategy: (attempt) => Math.min(100 * 2 ** (attempt - 1), MAX_RECONNECT_DELAY_MS),
    // A node's own queue is the cluster's to manage; the command timeout bounds a wait in it.
    redisOptions: {
      ...connection,
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
      commandTimeout: 500,
      socketTimeout: 1_000,
    },
  });
  logConnectionState(cluster, log.child({ component: 'redis', cluster: true }), clock);
  return cluster;
}

/**
 * Resolves when Redis answers PING, throws (at once while disconnected) otherwise. Only the tests
 * use it, to wait for a server: Redis is deliberately not a readiness check (see openRuntime).
 */
export async function pingRedis(redis: RedisConnection): Promise<void> {
  await redis.ping();
}

/**
 * The first connection's outcome: undefined once the client is ready, or after `withinMs` without an
 * answer; else its first error. The runtime reads it to tell a Redis that refuses this process (a
 * certificate it does not trust, a wrong password), which ends the start, from one that is only
 * away, which the limiters count around.
 */
export function firstConnectionError(redis: Redis, withinMs: number): Promise<Error | undefined> {
  return new Promise((done) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', finish);
      done(error);
    };
    const onReady = () => finish();
    const timer = setTimeout(finish, withinMs);
    if (redis.status === 'ready') return finish();
    redis.once('ready', onReady);
    redis.on('error', finish);
  });
}

/**
 * The same for a Redis Cluster, from a connection of its own to the first node given, with the
 * cluster's TLS and credentials: the cluster client says of a node that failed only "Connection is
 * closed.", never why.
 */
export async function firstClusterConnectionError(
  nodes: readonly { host: string; port: number }[],
  connection: RedisConnectionSecurity | undefined,
  withinMs: number,
): Promise<Error | undefined> {
  const [first] = nodes;
  if (!first) return undefined;
  const probe = new Redis({ ...connection, ...first, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    return await firstConnectionError(probe, withinMs);
  } finally {
    probe.disconnect();
  }
}

/**
 * Closes gracefully (pending replies still arrive) when connected; otherwise just stops the
 * reconnecting, since QUIT cannot be sent to a Redis that is not there.
 */
export async function closeRedisClient(redis: RedisConnection): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // The connection went away while quitting: nothing is left to flush.
    }
  }
  redis.disconnect();
}

/**
 * Connection errors are logged, paced while they repeat, and never left as unhandled 'error'
 * events. Failed commands are not logged here: they reject to their caller.
 */
function logConnectionState(redis: RedisConnection, log: Logger, clock: Clock): void {
  let failing = false;
  let lastLoggedAt = 0;
  let suppressed = 0;
  redis.on('error', (err: Error) => {
    const now = clock.now().getTime();
    if (failing && now - lastLoggedAt < ERROR_LOG_INTERVAL_MS) {
      suppressed += 1;
      return;
    }
    log.error({ err, suppressed }, 'redis connection error; reconnecting');
    failing = true;
    lastLoggedAt = now;
    suppressed = 0;
  });
  redis.on('ready', () => {
    log.info(failing ? 'redis connection restored' : 'redis connected');
    failing = false;
    suppressed = 0;
  });
}
