import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { isTakeover, planLeases, type HeldLease } from '@rsd/domain';
import type { Clock, LeaseOwner, LeaseStore, Runtime } from '@rsd/ports';
import { env } from './config';
import { every, type PeriodicJob } from './periodic-job';

export interface LeaseKeeperOptions {
  store: LeaseStore;
  /** The piece of work the names belong to (`notifier-queue`, `credentials-relay`). */
  group: string;
  names: readonly string[];
  /** This replica's name among the group's members (`replicaName()`). */
  me: string;
  clock: Clock;
  log: Pick<Logger, 'info' | 'warn'>;
  /** How long an epoch lasts unrenewed. */
  ttlMs: number;
  /** How often the leases are renewed and the free ones looked for. */
  renewEveryMs: number;
  /** How far replicas' clocks may differ: a holder stops acting this long before others may take over. */
  skewMarginMs: number;
  /** A name is held: work on it may start, under `fence`; `takeover` when a lost holder's work may be repeated. */
  onAcquired?: (name: string, fence: number, takeover: boolean) => void;
  /**
   * A name is no longer held, or is about to be given back: no new work on it may start, and the
   * promise settles once what was under way has finished (a release waits for it; a loss does not).
   */
  onLost?: (name: string) => Promise<void>;
}

export interface LeaseKeeper {
  /** The fence under which work on `name` may be done now, or undefined if this replica may not. */
  fenceOf(name: string): number | undefined;
  /** Every name this replica may work now, with its fence. */
  held(): Map<string, number>;
  /** One round: renews, gives back, takes. The timer runs it; a test may call it with a fake clock. */
  tick(): Promise<void>;
  /** Starts the rounds on the timer (the first at once). */
  start(): void;
  /** No more rounds; what is held is finished (`onLost`) and released, so another replica takes it at once. */
  stop(): Promise<void>;
}

/**
 * Decision 52: the leases' timing, the same for every service that keeps some. With the defaults a
 * lost replica's work moves within 8 s (its epochs' `until`) and one 2 s round: under 15 s.
 */
export const leaseConfigShape = {
  /** How long a lease lasts unrenewed. */
  LEASE_TTL_MS: env.positiveInt(8_000),
  /** How often leases are renewed and free ones looked for. */
  LEASE_RENEW_INTERVAL_MS: env.positiveInt(2_000),
  /** How far the replicas' clocks may differ. */
  LEASE_SKEW_MARGIN_MS: env.positiveInt(1_000),
};

/**
 * Decision 52: a service's keeper of `names`, where its replicas share a store (none where the runtime
 * is one process), as this replica and timed as the service is configured (`leaseConfigShape`);
 * `onHeld` is told how many it holds after each change (the leases-held gauge).
 */
export async function openLeaseKeeper(
  runtime: Pick<Runtime, 'openLeaseStore'>,
  owner: LeaseOwner,
  options: Pick<LeaseKeeperOptions, 'group' | 'names' | 'clock' | 'log' | 'onAcquired' | 'onLost'> & {
    config: { LEASE_TTL_MS: number; LEASE_RENEW_INTERVAL_MS: number; LEASE_SKEW_MARGIN_MS: number };
    onHeld?: (count: number) => void;
  },
): Promise<LeaseKeeper | undefined> {
  if (!runtime.openLeaseStore) return undefined;
  const { config, onHeld, onAcquired, onLost, ...rest } = options;
  const keeper: LeaseKeeper = createLeaseKeeper({
    ...rest,
    store: await runtime.openLeaseStore(owner),
    me: replicaName(),
    ttlMs: config.LEASE_TTL_MS,
    renewEveryMs: config.LEASE_RENEW_INTERVAL_MS,
    skewMarginMs: config.LEASE_SKEW_MARGIN_MS,
    onAcquired: (name, fence, takeover) => {
      onAcquired?.(name, fence, takeover);
      onHeld?.(keeper.held().size);
    },
    onLost: async (name) => {
      await onLost?.(name);
      onHeld?.(keeper.held().size);
    },
  });
  return keeper;
}

/** A name for this process among its service's replicas: its host (the pod's name) and a random part. */
export function replicaName(): string {
  return `${hostname()}-${randomUUID().slice(0, 8)}`;
}

/**
 * Decision 52: keeps a replica's share of a group of leases (`planLeases` decides; this reads and writes
 * the store on a timer). An epoch is trusted only until its `until` less the skew margin, as of the
 * start of the write that set it, and only if that write was acknowledged before the previous trust ran
 * out: another replica takes the name only once `until` has passed by its own clock, by which time this
 * one has stopped. What it acts on carries the fence, so a replica that stalled past that (a pause, a
 * partition) finds its late writes refused where the work checks the fence.
 */
export function createLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { store, group, names, me, clock, log, ttlMs, skewMarginMs } = options;
  const held = new Map<string, HeldLease>();
  let job: PeriodicJob | undefined;
  let stopped = false;
  let round: Promise<void> | undefined;

  const trusted = (lease: HeldLease | undefined) => lease !== undefined && lease.trustedUntil > clock.now().getTime();
  const iso = (ms: number) => new Date(ms).toISOString();

  function drop(name: string, why: string): Promise<void> {
    held.delete(name);
    log.warn({ group, lease: name }, why);
    return options.onLost?.(name) ?? Promise.resolve();
  }

  async function runRound(): Promise<void> {
    const startedAt = clock.now().getTime();
    await store.heartbeat(group, me, iso(startedAt + ttlMs));
    const { latest, members } = await store.read(group, new Date(startedAt));
    const plan = planLeases({
      now: clock.now().getTime(),
      names,
      latest,
      held,
      members: new Set([...members, me]).size,
      orphanGraceMs: options.renewEveryMs,
    });
    for (const name of plan.lost) void drop(name, 'lease lost: its work stops here and moves to another replica');

    if (plan.renew.length > 0) {
      const renewStart = clock.now().getTime();
      const renewing = plan.renew.map((name) => ({ name, fence: held.get(name)?.fence ?? 0 }));
      await store.renew(group, me, renewing, iso(renewStart + ttlMs));
      const acknowledgedAt = clock.now().getTime();
      for (const { name } of renewing) {
        const lease = held.get(name);
        if (!lease) continue;
        // Acknowledged after the old trust ran out: another replica may already have taken it.
        if (acknowledgedAt >= lease.trustedUntil) void drop(name, 'lease renewed too late: given up');
        else lease.trustedUntil = renewStart + ttlMs - skewMarginMs;
      }
    }

    for (const name of plan.release) await release(name);

    for (const { name, fence, previous } of plan.claim) {
      if (stopped) break;
      const claimStart = clock.now().getTime();
      if (!(await store.claim(group, { name, fence, owner: me, until: iso(claimStart + ttlMs) }))) continue;
      held.set(name, { fence, trustedUntil: claimStart + ttlMs - skewMarginMs });
      const takeover = isTakeover(previous, me);
      if (takeover) log.warn({ group, lease: name, fence, from: previous?.owner }, 'lease taken over from a lost replica');
      options.onAcquired?.(name, fence, takeover);
    }
  }

  /** Finishes the work on `name`, then marks its epoch released and ended now: the next holder repeats nothing. */
  async function release(name: string): Promise<void> {
    const lease = held.get(name);
    if (!lease) return;
    held.delete(name);
    await options.onLost?.(name);
    await store.renew(group, me, [{ name, fence: lease.fence }], iso(clock.now().getTime()), true);
  }

  function tick(): Promise<void> {
    round ??= runRound().finally(() => {
      round = undefined;
    });
    return round;
  }

  return {
    fenceOf(name) {
      const lease = held.get(name);
      return trusted(lease) ? lease?.fence : undefined;
    },
    held() {
      return new Map([...held].filter(([, lease]) => trusted(lease)).map(([name, lease]) => [name, lease.fence]));
    },
    tick,
    start() {
      job ??= every(options.renewEveryMs, tick, { name: `keeping the ${group} leases`, log, runAtStart: true });
    },
    async stop() {
      stopped = true;
      await job?.stop();
      await round?.catch(() => undefined);
      for (const name of [...held.keys()]) await release(name).catch(() => undefined);
    },
  };
}
