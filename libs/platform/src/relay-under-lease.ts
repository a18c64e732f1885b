import type { AuthorizationStore, Clock, LeaseOwner, Runtime } from '@rsd/ports';
import type { Logger } from './logger';
import { openLeaseKeeper, type LeaseKeeper } from './lease-keeper';
import { createOutboxRelay, type OutboxRelay } from './outbox-relay';

export interface RelayUnderLease {
  relay: OutboxRelay;
  /** The keeper of the relay's lease; none where the runtime is one process. */
  leader: LeaseKeeper | undefined;
  /** Whether this replica holds the lease now, for the work that runs under it too; none where it is the only relay. */
  isLeader: (() => boolean) | undefined;
}

/**
 * Decision 52: a service's outbox relay, started. Where replicas share the store it runs on the holder
 * of one lease (`lease`, in `group`), at the leader's interval, and a new holder first publishes what
 * the last one left owed (what a takeover from a lost one published again is counted by
 * `onRepublished`); alone, what is owed from before a restart (or an event-log outage) goes out first.
 * `work` names what runs under the lease, for the log.
 */
export async function startRelayUnderLease(
  runtime: Pick<Runtime, 'openLeaseStore' | 'eventLog'>,
  owner: LeaseOwner,
  options: {
    store: AuthorizationStore;
    clock: Clock;
    log: Logger;
    group: string;
    lease: string;
    work: string;
    config: Parameters<typeof openLeaseKeeper>[2]['config'] & { OUTBOX_LEADER_INTERVAL_MS: number; OUTBOX_RELAY_INTERVAL_MS: number };
    onHeld?: (count: number) => void;
    onRepublished?: (entries: number) => void;
  },
): Promise<RelayUnderLease> {
  const { store, clock, log, group, lease, work, config, onHeld, onRepublished } = options;
  let leadershipTaken: (takeover: boolean) => void = () => undefined;
  const leader = await openLeaseKeeper(runtime, owner, {
    group,
    names: [lease],
    clock,
    log,
    config,
    onAcquired: (_name, _fence, takeover) => leadershipTaken(takeover),
    ...(onHeld ? { onHeld } : {}),
  });
  const isLeader = leader ? () => leader.fenceOf(lease) !== undefined : undefined;
  const relay = createOutboxRelay({
    store,
    eventLog: runtime.eventLog,
    log,
    ...(isLeader ? { isLeader, ...(onRepublished ? { onRepublished } : {}) } : {}),
  });
  const flushOwed = () =>
    relay.flush().catch((error: unknown) => log.warn({ err: error }, 'outbox not yet flushed; the relay keeps trying'));
  leadershipTaken = (takeover) => {
    log.info({ takeover }, `this replica now runs ${work}`);
    if (takeover) relay.tookOver();
    // What the last leader left owed goes out at once.
    void flushOwed();
  };
  if (leader) leader.start();
  // Events still owed from before a restart (or an event-log outage) go out first.
  else await flushOwed();
  relay.start(leader ? config.OUTBOX_LEADER_INTERVAL_MS : config.OUTBOX_RELAY_INTERVAL_MS);
  return { relay, leader, isLeader };
}
