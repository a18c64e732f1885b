import type { Logger } from '@rsd/platform';
import type { AuthorizationStore, EventLog, OutboxEntry, PendingOutbox } from '@rsd/ports';

export interface OutboxRelay {
  /** One pass over everything owed; rejects if some of it could not be published (it stays owed). */
  flush(): Promise<void>;
  start(intervalMs: number): void;
  stop(): Promise<void>;
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
  let timer: NodeJS.Timeout | undefined;

  async function pass(): Promise<void> {
    let failure: Error | undefined;
    for (;;) {
      const pending = await store.pendingOutbox(PAGE_SIZE);
      for (const owed of pending) {
        try {
          await publish(owed);
        } catch (error) {
          failure ??= error instanceof Error ? error : new Error(String(error));
        }
      }
      // A failing Client ID would be handed back first on every page: leave it for the next pass.
      if (failure !== undefined || pending.length < PAGE_SIZE) break;
    }
    if (failure !== undefined) throw failure;
  }

  /** In order; at the first failure the rest of this Client ID waits, so its events never overtake each other. */
  async function publish(owed: PendingOutbox): Promise<void> {
    for (const run of runsByTopic(owed.entries)) {
      await eventLog.append(
        run.topic,
        run.entries.map(({ key, value }) => ({ key, value })),
      );
      await store.markPublished(
        owed.clientId,
        run.entries.map((entry) => entry.id),
      );
      log.debug({ clientId: owed.clientId, published: run.entries.length }, 'outbox entries published');
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

  function flushInBackground(): void {
    flush().catch((error: unknown) => log.warn({ err: error }, 'outbox relay could not publish; will retry'));
  }

  return {
    flush,
    start(intervalMs) {
      if (timer) return;
      flushInBackground();
      timer = setInterval(flushInBackground, intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await Promise.all([running?.catch(ignore), queued?.catch(ignore)]);
    },
  };
}

/** Awaited after every write, so a successful answer means the event is in the log, unless the log is down. */
export async function publishOwedEvents(relay: Pick<OutboxRelay, 'flush'>, log: Logger): Promise<void> {
  try {
    await relay.flush();
  } catch (error) {
    log.warn({ err: error }, 'event log unavailable: the change is stored and the outbox relay will publish its event later');
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
