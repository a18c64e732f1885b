import { createMemoryLeaseStore } from '@rsd/embedded';
import { createLogger, startRelayUnderLease } from '@rsd/platform';
import type { OutboxEntry } from '@rsd/ports';
import { anAuthorizationRecord, eventually, valuesOn } from '@rsd/testkit';
import { openEmbeddedStores, type EmbeddedStores } from '../../embedded/src/testing/temp-database';

const TOPIC = 'rsd.authorizations.v1';
const CLIENT_ID = 'rs_AAAAAAAAAAAAAAAA';
const log = createLogger('credentials', 'silent');
const clock = { now: () => new Date() };
const config = {
  LEASE_TTL_MS: 8_000,
  LEASE_RENEW_INTERVAL_MS: 2_000,
  LEASE_SKEW_MARGIN_MS: 1_000,
  OUTBOX_LEADER_INTERVAL_MS: 20,
  OUTBOX_RELAY_INTERVAL_MS: 60_000,
};
/** The credentials service's relay on `runtime`, as its module starts it. */
const startOn = (runtime: Parameters<typeof startRelayUnderLease>[0], store: EmbeddedStores['store'], onHeld?: (count: number) => void) =>
  startRelayUnderLease(runtime, 'credentials', {
    store,
    clock,
    log,
    config,
    group: 'credentials-relay',
    lease: 'relay',
    work: 'the outbox relay',
    ...(onHeld ? { onHeld } : {}),
  });
const owed: OutboxEntry = { id: `${CLIENT_ID}-1`, topic: TOPIC, key: CLIENT_ID, value: JSON.stringify({ n: 1 }) };

describe('the outbox relay started under its lease (decision 52)', () => {
  let stores: EmbeddedStores;
  const stops: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    stores = await openEmbeddedStores('relay-under-lease-');
    await stores.store.create(anAuthorizationRecord({ clientId: CLIENT_ID }), [owed]);
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    await stores.close();
  });

  test('when the runtime is one process (no lease store), then what was owed is published before the start resolves, and the relay runs alone', async () => {
    const started = await startOn({ eventLog: stores.eventLog }, stores.store);
    stops.push(() => started.relay.stop());

    expect(await valuesOn(stores.eventLog, TOPIC)).toEqual([owed.value]);
    expect(started.leader).toBeUndefined();
    expect(started.isLeader).toBeUndefined();
  });

  test('when replicas share a lease store, then the relay publishes once this replica holds the lease, and says so', async () => {
    const held: number[] = [];
    const started = await startOn(
      { eventLog: stores.eventLog, openLeaseStore: () => Promise.resolve(createMemoryLeaseStore()) },
      stores.store,
      (count) => held.push(count),
    );
    stops.push(
      () => started.relay.stop(),
      () => started.leader?.stop() ?? Promise.resolve(),
    );

    await eventually(async () => expect(await valuesOn(stores.eventLog, TOPIC)).toEqual([owed.value]));
    expect(started.isLeader?.()).toBe(true);
    expect(held).toEqual([1]);
  });
});
