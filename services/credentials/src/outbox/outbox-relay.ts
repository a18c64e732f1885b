import { every, type Logger, type PeriodicJob, type ScheduledWork } from '@rsd/platform';
import type { AuthorizationStore, EventLog, OutboxEntry, PendingOutbox } from '@rsd/ports';

export interface OutboxRelay extends ScheduledWork {
  /** One pass over everything owed; rejects if some of it could not be published (it stays owed). */
  flush(): Promise<void>;
}

export interface OutboxRelayDeps {
  store: AuthorizationStore;
  eventLog: EventLog;
  log: Logger;
}

const PAGE_SIZE = 100;

/**
 * Publishes what the store owes the event log, then marks it published. Delivery is at least once
 * (a crash between append and mark publishes again); consumers are idempotent by revision.
 */
export function createOutboxRelay({ store, eventLog, log }: OutboxRelayDeps): OutboxRelay {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  let job: PeriodicJob | undefined;

  async function pass(): Promise<void> {
    for (;;) {
      const pending = await store.pendingOutbox(PAGE_SIZE);
      await publishTogether(pending);
      if (pending.length < PAGE_SIZE) return;
    }
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
    start(intervalMs) {
      job ??= every(intervalMs, flush, { name: 'publishing the outbox', log, runAtStart: true });
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
