import { createLogger, createOutboxRelay, publishOwedEvents } from '@rsd/platform';
import type { StoredAuthorization } from '@rsd/domain';
import type { AuthorizationStore, EventLog, OutboxEntry, OutgoingRecord } from '@rsd/ports';
import { anAuthorizationRecord, eventually, valuesOn } from '@rsd/testkit';
import { openEmbeddedStores, type EmbeddedStores } from '../../embedded/src/testing/temp-database';

const TOPIC = 'rsd.authorizations.v1';
const log = createLogger('credentials', 'silent');

const aRecord = (clientId: string): StoredAuthorization => anAuthorizationRecord({ clientId });

function anEntry(clientId: string, n: number): OutboxEntry {
  return { id: `${clientId}-${n}`, topic: TOPIC, key: clientId, value: JSON.stringify({ clientId, n }) };
}

/** The real file log behind a switch, counting appends and able to fail them. */
function controllableLog(real: EventLog) {
  const state = { failing: false, appends: 0, gate: undefined as Promise<void> | undefined };
  const eventLog: EventLog = {
    append: async (topic: string, records: readonly OutgoingRecord[]) => {
      state.appends += 1;
      await state.gate;
      if (state.failing) throw new Error('event log down');
      await real.append(topic, records);
    },
    subscribe: (options) => real.subscribe(options),
    close: () => real.close(),
  };
  return { eventLog, state };
}

async function valuesIn(eventLog: EventLog): Promise<unknown[]> {
  return (await valuesOn(eventLog, TOPIC)).map((value) => JSON.parse(value) as unknown);
}

describe('outbox relay', () => {
  let stores: EmbeddedStores;
  let store: AuthorizationStore;
  let real: EventLog;

  beforeEach(async () => {
    stores = await openEmbeddedStores('outbox-relay-');
    ({ store, eventLog: real } = stores);
  });
  afterEach(() => stores.close());

  test('when entries are owed, then a flush publishes them in order per Client ID and marks them published', async () => {
    await store.create(aRecord('rs_AAAAAAAAAAAAAAAA'), [anEntry('rs_AAAAAAAAAAAAAAAA', 1), anEntry('rs_AAAAAAAAAAAAAAAA', 2)]);
    await store.create(aRecord('rs_BBBBBBBBBBBBBBBB'), [anEntry('rs_BBBBBBBBBBBBBBBB', 1)]);
    const relay = createOutboxRelay({ store, eventLog: real, log });

    await relay.flush();
    await relay.flush();

    const values = await valuesIn(real);
    expect(values).toHaveLength(3);
    expect(values.filter((v) => (v as { clientId: string }).clientId === 'rs_AAAAAAAAAAAAAAAA')).toEqual([
      { clientId: 'rs_AAAAAAAAAAAAAAAA', n: 1 },
      { clientId: 'rs_AAAAAAAAAAAAAAAA', n: 2 },
    ]);
    expect(await store.pendingOutbox(10)).toEqual([]);
  });

  test('when several Client IDs owe events, then one append per topic publishes them all, each Client ID in its order', async () => {
    const other = 'rs.other.v1';
    await store.create(aRecord('rs_AAAAAAAAAAAAAAAA'), [
      anEntry('rs_AAAAAAAAAAAAAAAA', 1),
      { ...anEntry('rs_AAAAAAAAAAAAAAAA', 2), topic: other },
    ]);
    await store.create(aRecord('rs_BBBBBBBBBBBBBBBB'), [anEntry('rs_BBBBBBBBBBBBBBBB', 1)]);
    await store.create(aRecord('rs_CCCCCCCCCCCCCCCC'), [anEntry('rs_CCCCCCCCCCCCCCCC', 1), anEntry('rs_CCCCCCCCCCCCCCCC', 2)]);
    const { eventLog, state } = controllableLog(real);
    const relay = createOutboxRelay({ store, eventLog, log });

    await relay.flush();

    // The first runs of all three in one append to TOPIC; A's second run, on the other topic, after it.
    expect(state.appends).toBe(2);
    const values = (await valuesIn(real)) as { clientId: string; n: number }[];
    expect(values).toHaveLength(4);
    for (const clientId of ['rs_BBBBBBBBBBBBBBBB', 'rs_CCCCCCCCCCCCCCCC']) {
      expect(values.filter((v) => v.clientId === clientId).map((v) => v.n)).toEqual(clientId.endsWith('C') ? [1, 2] : [1]);
    }
    expect((await valuesOn(real, other)).map((value) => JSON.parse(value) as unknown)).toEqual([{ clientId: 'rs_AAAAAAAAAAAAAAAA', n: 2 }]);
    expect(await store.pendingOutbox(10)).toEqual([]);
  });

  test('when the event log fails, then flush rejects, the entries stay owed, and the next flush publishes them once', async () => {
    await store.create(aRecord('rs_AAAAAAAAAAAAAAAA'), [anEntry('rs_AAAAAAAAAAAAAAAA', 1)]);
    const { eventLog, state } = controllableLog(real);
    const relay = createOutboxRelay({ store, eventLog, log });
    state.failing = true;

    await expect(relay.flush()).rejects.toThrow('event log down');
    expect(await store.pendingOutbox(10)).toHaveLength(1);

    state.failing = false;
    await relay.flush();
    await relay.flush();

    expect(await valuesIn(real)).toEqual([{ clientId: 'rs_AAAAAAAAAAAAAAAA', n: 1 }]);
  });

  test('when flushes overlap, then they share the running pass plus one more, and nothing is published twice', async () => {
    await store.create(aRecord('rs_AAAAAAAAAAAAAAAA'), [anEntry('rs_AAAAAAAAAAAAAAAA', 1)]);
    const { eventLog, state } = controllableLog(real);
    let open: () => void = () => undefined;
    state.gate = new Promise<void>((resolve) => (open = resolve));
    const relay = createOutboxRelay({ store, eventLog, log });

    const first = relay.flush();
    await new Promise((resolve) => setImmediate(resolve));
    // Written while the first pass is blocked inside append: only a following pass can see it.
    await store.create(aRecord('rs_BBBBBBBBBBBBBBBB'), [anEntry('rs_BBBBBBBBBBBBBBBB', 1)]);
    const others = [relay.flush(), relay.flush(), relay.flush()];
    open();
    await Promise.all([first, ...others]);

    expect(state.appends).toBe(2);
    expect(await valuesIn(real)).toHaveLength(2);
    expect(await store.pendingOutbox(10)).toEqual([]);
  });

  test('when the relay is started, then it publishes what is owed without being asked, and stops cleanly', async () => {
    await store.create(aRecord('rs_AAAAAAAAAAAAAAAA'), [anEntry('rs_AAAAAAAAAAAAAAAA', 1)]);
    const relay = createOutboxRelay({ store, eventLog: real, log });

    relay.start(10);
    await store.create(aRecord('rs_BBBBBBBBBBBBBBBB'), [anEntry('rs_BBBBBBBBBBBBBBBB', 1)]);
    await eventually(async () => expect(await store.pendingOutbox(10)).toEqual([]));
    await relay.stop();

    expect(await valuesIn(real)).toHaveLength(2);
  });

  test('when publishing after a write fails, then the writer is not failed: the event stays owed', async () => {
    await store.create(aRecord('rs_AAAAAAAAAAAAAAAA'), [anEntry('rs_AAAAAAAAAAAAAAAA', 1)]);
    const { eventLog, state } = controllableLog(real);
    state.failing = true;

    await expect(publishOwedEvents(createOutboxRelay({ store, eventLog, log }), log)).resolves.toBe('pending');
    expect(await store.pendingOutbox(10)).toHaveLength(1);
  });
});
