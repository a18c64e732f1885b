import { randomUUID } from 'node:crypto';
import {
  every,
  type Logger,
  type PeriodicJob,
  type ScheduledWork,
  publishOwedEvents,
  type OutboxRelay,
  runCommand,
  type Command,
} from '@rsd/platform';
import { decideAlerts, decideExpire, expiryNoticeDue, SYSTEM_ORIGIN, type Origin, type StoredAuthorization } from '@rsd/domain';
import type { AuthorizationStore, Clock } from '@rsd/ports';

export interface ExpiryScheduler extends ScheduledWork {
  /** Marks every authorization whose expiry has passed; resolves to how many it marked. */
  runOnce(): Promise<number>;
}

export interface ExpirySchedulerDeps {
  store: AuthorizationStore;
  relay: Pick<OutboxRelay, 'flush'>;
  clock: Clock;
  log: Logger;
  newEventId?: () => string;
  /** Decision 52, where replicas share the store: whether this replica holds the lease the check runs under. */
  isLeader?: () => boolean;
}

const PAGE_SIZE = 100;

/**
 * Emits AuthorizationExpired for each authorization whose expiry has passed, at most one interval
 * late, and the expiry notices that fall due (decision 44). Readers never depend on it being on time: the read API also compares `expiresAt` itself.
 */
export function createExpiryScheduler({
  store,
  relay,
  clock,
  log,
  newEventId = randomUUID,
  isLeader,
}: ExpirySchedulerDeps): ExpiryScheduler {
  let job: PeriodicJob | undefined;

  async function runOnce(): Promise<number> {
    const now = clock.now();
    const noticed = await sendExpiryNotices(now);
    let marked = 0;
    for (;;) {
      const due = await store.findDueForExpiry(now, PAGE_SIZE);
      let markedNow = 0;
      for (const record of due) {
        if (await markExpired(record, now)) markedNow += 1;
      }
      marked += markedNow;
      // A full page where nothing could be marked would come back unchanged: stop rather than spin.
      if (due.length < PAGE_SIZE || markedNow === 0) break;
    }
    if (marked > 0) log.info({ expired: marked }, 'authorizations expired');
    if (noticed > 0) log.info({ noticed }, 'expiry notices raised');
    if (marked > 0 || noticed > 0) await publishOwedEvents(relay, log);
    return marked;
  }

  /** Decision 44: `authorization.expiring` 7 days and 1 day before, each an alert of the record's. */
  async function sendExpiryNotices(now: Date): Promise<number> {
    let noticed = 0;
    for (;;) {
      const due = await store.findDueForExpiryNotice(now, PAGE_SIZE);
      let noticedNow = 0;
      for (const record of due) {
        const notice = expiryNoticeDue(record, now);
        if (!notice) continue;
        // A lost race: the record changed meanwhile, and the next check finds it again if still due.
        const written = await once(undefined, record, 'expiry notice', () => {
          const decided = decideAlerts(record, { activity: notice.activity, alerts: [notice.alert] }, newEventId);
          return { write: { authorization: decided.record, expectedRevision: record.revision, events: decided.events }, answer: true };
        });
        if (written) noticedNow += 1;
      }
      noticed += noticedNow;
      if (due.length < PAGE_SIZE || noticedNow === 0) break;
    }
    return noticed;
  }

  /** A lost race means a revoke got there first: nothing left to expire, and nothing to retry. */
  function markExpired(record: StoredAuthorization, now: Date): Promise<boolean> {
    return once(SYSTEM_ORIGIN, record, 'expiry', () => {
      const decision = decideExpire(record, { id: newEventId(), time: now });
      if (decision.outcome === 'unchanged') return { answer: false };
      return { write: { authorization: decision.record, expectedRevision: record.revision, events: [decision.event] }, answer: true };
    });
  }

  /** One attempt on the record as the page found it, published with the rest of the pass; a lost race answers false. */
  async function once(
    origin: Origin | undefined,
    record: StoredAuthorization,
    what: string,
    decide: Command<StoredAuthorization, boolean>['decide'],
  ) {
    const { answer } = await runCommand({ store, relay, log }, origin, {
      what,
      context: { clientId: record.clientId },
      publish: 'none',
      attempts: 1,
      exhausted: () => false,
      load: () => Promise.resolve(record),
      decide,
    });
    return answer;
  }

  return {
    runOnce,
    start(intervalMs) {
      // Only the leader's check runs: two would each mark and announce the same expiry.
      job ??= every(intervalMs, () => ((isLeader?.() ?? true) ? runOnce() : 0), { name: 'the expiry check', log, runAtStart: true });
    },
    async stop() {
      await job?.stop();
      job = undefined;
    },
  };
}
