import { createMemoryLeaseStore } from '@rsd/embedded';
import { capturedLog } from '@rsd/testkit';
import { shardNames } from '@rsd/domain';
import type { LeaseStore } from '@rsd/ports';
import { createLeaseKeeper, type LeaseKeeper } from './lease-keeper';

const TTL_MS = 8_000;
const RENEW_MS = 2_000;
const MARGIN_MS = 1_000;

/** Replicas sharing one store and one fake clock (each may be given its own skew). */
function replicas(names: readonly string[]) {
  let now = Date.parse('2026-12-01T10:00:00.000Z');
  const store = createMemoryLeaseStore();
  const events: string[] = [];
  const replica = (me: string, options: { store?: LeaseStore; skewMs?: number } = {}): LeaseKeeper =>
    createLeaseKeeper({
      store: options.store ?? store,
      group: 'work',
      names,
      me,
      clock: { now: () => new Date(now + (options.skewMs ?? 0)) },
      log: capturedLog().log,
      ttlMs: TTL_MS,
      renewEveryMs: RENEW_MS,
      skewMarginMs: MARGIN_MS,
      onAcquired: (name, fence, takeover) => events.push(`${me} took ${name}#${fence}${takeover ? ' over' : ''}`),
      onLost: (name) => {
        events.push(`${me} left ${name}`);
        return Promise.resolve();
      },
    });
  return {
    store,
    events,
    replica,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Rounds of every live replica, RENEW_MS apart, as their timers would run them. */
async function rounds(world: ReturnType<typeof replicas>, live: readonly LeaseKeeper[], count: number): Promise<void> {
  for (let n = 0; n < count; n += 1) {
    for (const keeper of live) await keeper.tick();
    world.advance(RENEW_MS);
  }
}

/** No name held by two replicas at one instant. */
function expectDisjoint(keepers: readonly LeaseKeeper[]): void {
  const holders = keepers.flatMap((keeper) => [...keeper.held().keys()]);
  expect(new Set(holders).size).toBe(holders.length);
}

describe('lease keeper (decision 52)', () => {
  it('when one replica runs, then it holds every name, each under fence 1', async () => {
    const world = replicas(shardNames('shard-', 4));
    const a = world.replica('a');

    await a.tick();

    expect(a.held()).toEqual(new Map(shardNames('shard-', 4).map((name) => [name, 1])));
  });

  it('when replicas join, then the names are shared evenly, handed over by release, never held twice at once', async () => {
    const world = replicas(shardNames('shard-', 6));
    const [a, b, c] = [world.replica('a'), world.replica('b'), world.replica('c')];
    await rounds(world, [a], 1);

    for (let n = 0; n < 4; n += 1) {
      await rounds(world, [a, b, c], 1);
      expectDisjoint([a, b, c]);
    }

    expect([a.held().size, b.held().size, c.held().size]).toEqual([2, 2, 2]);
    // Handed over, not taken over: a finished its work on each first.
    expect(world.events.filter((event) => event.endsWith(' over'))).toEqual([]);
    expect(world.events.filter((event) => event.startsWith('a left'))).toHaveLength(4);
  });

  it('when a holder stops renewing (killed), then another takes its names over within the ttl and a round, under the next fence', async () => {
    const world = replicas(shardNames('shard-', 4));
    const [a, b] = [world.replica('a'), world.replica('b')];
    await rounds(world, [a, b], 3);
    const ofA = [...a.held().keys()];
    expect(ofA).toHaveLength(2);

    // a is killed: it runs no more rounds. b alone goes on.
    let waited = 0;
    while (ofA.some((name) => b.fenceOf(name) === undefined)) {
      await rounds(world, [b], 1);
      waited += RENEW_MS;
      // Until its epochs' until has passed, a alone may act on them: b never takes them early.
      if (waited < TTL_MS) expect(ofA.every((name) => b.fenceOf(name) === undefined)).toBe(true);
    }

    expect(waited).toBeLessThanOrEqual(TTL_MS + 2 * RENEW_MS);
    for (const name of ofA) expect(b.fenceOf(name)).toBe(2);
    expect(world.events.filter((event) => event.endsWith(' over')).sort()).toEqual(ofA.map((name) => `b took ${name}#2 over`).sort());
  });

  it('when a holder cannot reach the store, then it stops trusting its leases before another may take them', async () => {
    const world = replicas(['relay']);
    let reachable = true;
    const flaky: LeaseStore = {
      ...world.store,
      read: (...args) => (reachable ? world.store.read(...args) : Promise.reject(new Error('unreachable'))),
      heartbeat: (...args) => (reachable ? world.store.heartbeat(...args) : Promise.reject(new Error('unreachable'))),
    };
    const a = world.replica('a', { store: flaky });
    const b = world.replica('b');
    await rounds(world, [a, b], 1);
    expect(a.fenceOf('relay')).toBe(1);

    reachable = false;
    for (let waited = 0; waited <= TTL_MS + RENEW_MS; waited += RENEW_MS) {
      await a.tick().catch(() => undefined);
      await b.tick();
      // At no instant do both act on it.
      expect(a.fenceOf('relay') !== undefined && b.fenceOf('relay') !== undefined).toBe(false);
      world.advance(RENEW_MS);
    }
    expect(a.fenceOf('relay')).toBeUndefined();
    expect(b.fenceOf('relay')).toBe(2);
  });

  it("when a replica's clock runs ahead by less than the margin, then it still never acts on a name while its holder may", async () => {
    const world = replicas(['relay']);
    const a = world.replica('a');
    const early = world.replica('b', { skewMs: MARGIN_MS - 1 });
    await a.tick();
    await a.stop().catch(() => undefined);
    const stalled = world.replica('a');
    // a is back as a fresh holder: b, whose clock is ahead, competes for every round after a stalls.
    await stalled.tick();
    for (let waited = 0; waited <= TTL_MS + RENEW_MS; waited += 500) {
      await early.tick();
      expect(stalled.fenceOf('relay') !== undefined && early.fenceOf('relay') !== undefined).toBe(false);
      world.advance(500);
    }
    expect(early.fenceOf('relay')).toBeDefined();
  });

  it('when a replica stops, then it releases what it held, and another takes it at once without a takeover', async () => {
    const world = replicas(['relay']);
    const [a, b] = [world.replica('a'), world.replica('b')];
    await rounds(world, [a, b], 1);
    const [holder, other] = a.fenceOf('relay') === undefined ? [b, a] : [a, b];

    await holder.stop();
    await other.tick();

    expect(other.fenceOf('relay')).toBe(2);
    expect(world.events.some((event) => event.endsWith(' over'))).toBe(false);
  });
});
