import type { Logger } from './logger';
import { every, type PeriodicJob, type ScheduledWork } from './periodic-job';
import type { AuthorizationStore, EventLog, OutboxEntry, PendingOutbox } from '@rsd/ports';

export interface OutboxRelay extends ScheduledWork {
  /**
   * One pass over everything owed; rejects if some of it could not be published (it stays owed). On a
   * replica that is not the relay's leader (decision 52), waits instead until what was owed at the call
   * is published by the leader.
   */
  flush(): Promise<void>;
  /** This replica just took the relay over from a lost one: its next pass may publish again what that one had under way. */
  tookOver(): void;
}

export interface OutboxRelayDeps {
  store: AuthorizationStore;
  eventLog: EventLog;
  log: Logger;
  /**
   * Decision 52, where replicas share the store: whether this replica holds the relay's lease now.
   * Absent: it is the only relay (the embedded runtime).
   */
  isLeader?: () => boolean;
  /** Entries a pass after a takeover published (each may have been published by the lost leader too). */
  onRepublished?: (entries: number) => void;
  /** How often a replica that is not the leader looks whether what it waits for is published. */
  followerPollMs?: number;
}

const PAGE_SIZE = 100;
/** What a follower reads of the owed entries to know what it waits for; a fuller page keeps it waiting. */
const FOLLOWER_PAGE_SIZE = 1_000;

/**
 * Publishes what the store owes the event log, then marks it published. Delivery is at least once
 * (a crash between append and mark publishes again); consumers are idempotent by revision.
 */
export function createOutboxRelay({ store, eventLog, log, isLeader, onRepublished, followerPollMs = 50 }: OutboxRelayDeps): OutboxRelay {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  let job: PeriodicJob | undefined;
  let afterTakeover = false;
  const leading = () => isLeader?.() ?? true;

  async function pass(): Promise<void> {
    const counting = afterTakeover;
    afterTakeover = false;
    let published = 0;
    try {
      for (;;) {
        // Leadership lost mid-pass: the rest is the new leader's.
        if (!leading()) return;
        const pending = await store.pendingOutbox(PAGE_SIZE);
        await publishTogether(pending);
        published += pending.reduce((sum, { entries }) => sum + entries.length, 0);
        if (pending.length < PAGE_SIZE) return;
      }
    } finally {
      if (counting && published > 0) {
        onRepublished?.(published);
        log.warn(
          { entries: published },
          'outbox relay taken over: entries owed at the takeover published (some may have been published before)',
        );
      }
    }
  }

  /**
   * Decision 52: a replica that is not the leader publishes nothing (two relays would publish the same
   * entries); its writer waits until the leader has published what was owed when it asked. Waiters
   * share one reading of the store at a time.
   */
  const waiters: { owed: Set<string>; settle: () => void; fail: (error: unknown) => void }[] = [];
  let watching: Promise<void> | undefined;
  async function watch(): Promise<void> {
    while (waiters.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, followerPollMs));
      let pending: PendingOutbox[];
      try {
        pending = await store.pendingOutbox(FOLLOWER_PAGE_SIZE);
      } catch (error) {
        // The store is out of reach: every waiter is told (its writer answers `pending`).
        for (const waiter of waiters.splice(0)) waiter.fail(error);
        return;
      }
      const stillOwed = new Set(pending.flatMap(({ entries }) => entries.map((entry) => entry.id)));
      const complete = pending.length < FOLLOWER_PAGE_SIZE;
      for (const waiter of [...waiters]) {
        if (complete && ![...waiter.owed].some((id) => stillOwed.has(id))) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.settle();
        }
      }
    }
  }
  async function waitForLeader(): Promise<void> {
    const pending = await store.pendingOutbox(FOLLOWER_PAGE_SIZE);
    if (pending.length === 0) return;
    const owed = new Set(pending.flatMap(({ entries }) => entries.map((entry) => entry.id)));
    const settled = new Promise<void>((settle, fail) => waiters.push({ owed, settle, fail }));
    watching ??= watch().finally(() => {
      watching = undefined;
    });
    await settled;
  }

  /**
   * Every owed Client ID's events in as few appends as their order allows: the first run (by topic)
   * of each Client ID's events in one append per topic, then the second runs, and so on. Each Client
   * ID's events keep their order, and one append, with its one sync, publishes what many writers
   * owe (four creates in flight share it instead of queueing behind each other's). A failure stops
   * the pass: what was not marked published stays owed for the next one, and is published again at
   * worst (consumers are idempotent by revision).
   */
  async function publishTogether(pending: readonly PendingOutbox[]): Promise<void> {
    const owed = pending.map(({ clientId, entries }) => ({ clientId, runs: runsByTopic(entries) }));
    for (let round = 0; owed.some(({ runs }) => runs.length > round); round += 1) {
      const byTopic = new Map<string, { clientId: string; entries: OutboxEntry[] }[]>();
      for (const { clientId, runs } of owed) {
        const run = runs[round];
        if (run) byTopic.set(run.topic, [...(byTopic.get(run.topic) ?? []), { clientId, entries: run.entries }]);
      }
      for (const [topic, parts] of byTopic) {
        await eventLog.append(
          topic,
          parts.flatMap(({ entries }) => entries.map(({ key, value }) => ({ key, value }))),
        );
        await Promise.all(
          parts.map(({ clientId, entries }) =>
            store.markPublished(
              clientId,
              entries.map((entry) => entry.id),
            ),
          ),
        );
        log.debug(
          { topic, clientIds: parts.length, published: parts.reduce((sum, { entries }) => sum + entries.length, 0) },
          'outbox entries published',
        );
      }
    }
  }

  /**
   * Concurrent callers share the pass in progress, then one more: an entry written while a pass was
   * running may have been read too late for it, and its writer is waiting to see it published.
   */
  function flush(): Promise<void> {
    if (!leading()) return waitForLeader();
    if (!running) {
      running = pass().finally(() => {
        running = undefined;
      });
      return running;
    }
    queued ??= running.then(ignore, ignore).then(() => {
      queued = undefined;
      return flush();
    });
    return queued;
  }

  return {
    flush,
    tookOver() {
      afterTakeover = true;
    },
    start(intervalMs) {
      // Only the leader's job publishes; a follower's ticks do nothing.
      job ??= every(intervalMs, () => (leading() ? flush() : undefined), { name: 'publishing the outbox', log, runAtStart: true });
    },
    async stop() {
      await job?.stop();
      job = undefined;
      await Promise.all([running?.catch(ignore), queued?.catch(ignore)]);
    },
  };
}

/**
 * What a writer can tell its client: `published` when every event owed at the call, its own
 * included, is in the event log; `pending` when the log could not take them within the deadline
 * (they stay owed and the relay keeps trying).
 */
export type Publication = 'published' | 'pending';

/** Awaited after every write, for at most `deadlineMs`: the writer is never failed by the event log. */
export async function publishOwedEvents(relay: Pick<OutboxRelay, 'flush'>, log: Logger, deadlineMs = Infinity): Promise<Publication> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'pending'>((resolve) => {
    if (Number.isFinite(deadlineMs)) timer = setTimeout(resolve, deadlineMs, 'pending');
  });
  try {
    // A flush that outlives the deadline goes on in the background: the race has already handled its outcome.
    const publication = await Promise.race([relay.flush().then(() => 'published' as const), deadline]);
    if (publication === 'pending') {
      log.warn({ deadlineMs }, 'event log did not take the change in time: the change is stored and its event will be published later');
    }
    return publication;
  } catch (error) {
    log.warn({ err: error }, 'event log unavailable: the change is stored and the outbox relay will publish its event later');
    return 'pending';
  } finally {
    clearTimeout(timer);
  }
}

function runsByTopic(entries: readonly OutboxEntry[]): { topic: string; entries: OutboxEntry[] }[] {
  const runs: { topic: string; entries: OutboxEntry[] }[] = [];
  for (const entry of entries) {
    const last = runs.at(-1);
    if (last?.topic === entry.topic) last.entries.push(entry);
    else runs.push({ topic: entry.topic, entries: [entry] });
  }
  return runs;
}

function ignore(): void {}
