import { randomUUID } from 'node:crypto';
import { attemptOnce, drainDue, leaderPasses, publishOwedEvents, type ScheduledWork, type SchedulerDeps } from '@rsd/platform';
import { decideAlerts, decideExpire, expiryNoticeDue, SYSTEM_ORIGIN } from '@rsd/domain';

export interface ExpiryScheduler extends ScheduledWork {
  /** Marks every authorization whose expiry has passed; resolves to how many it marked. */
  runOnce(): Promise<number>;
}

const PAGE_SIZE = 100;

/**
 * Emits AuthorizationExpired for each authorization whose expiry has passed, at most one interval
 * late, and the expiry notices that fall due (decision 44). Readers never depend on it being on time: the read API also compares `expiresAt` itself.
 */
export function createExpiryScheduler({ store, relay, clock, log, newEventId = randomUUID, isLeader }: SchedulerDeps): ExpiryScheduler {
  const commandDeps = { store, relay, log };

  async function runOnce(): Promise<number> {
    const now = clock.now();
    // Decision 44: `authorization.expiring` 7 days and 1 day before, each an alert of the record's.
    const noticed = await drainDue(
      PAGE_SIZE,
      (limit) => store.findDueForExpiryNotice(now, limit),
      (record) => {
        const notice = expiryNoticeDue(record, now);
        if (!notice) return Promise.resolve(false);
        // A lost race: the record changed meanwhile, and the next check finds it again if still due.
        return attemptOnce(commandDeps, undefined, record, {
          what: 'expiry notice',
          context: { clientId: record.clientId },
          decide: () => {
            const decided = decideAlerts(record, { activity: notice.activity, alerts: [notice.alert] }, newEventId);
            return { write: { authorization: decided.record, expectedRevision: record.revision, events: decided.events }, answer: true };
          },
        });
      },
    );
    // A lost race means a revoke got there first: nothing left to expire, and nothing to retry.
    const marked = await drainDue(
      PAGE_SIZE,
      (limit) => store.findDueForExpiry(now, limit),
      (record) =>
        attemptOnce(commandDeps, SYSTEM_ORIGIN, record, {
          what: 'expiry',
          context: { clientId: record.clientId },
          decide: () => {
            const decision = decideExpire(record, { id: newEventId(), time: now });
            if (decision.outcome === 'unchanged') return { answer: false };
            return { write: { authorization: decision.record, expectedRevision: record.revision, events: [decision.event] }, answer: true };
          },
        }),
    );
    if (marked > 0) log.info({ expired: marked }, 'authorizations expired');
    if (noticed > 0) log.info({ noticed }, 'expiry notices raised');
    if (marked > 0 || noticed > 0) await publishOwedEvents(relay, log);
    return marked;
  }

  return { runOnce, ...leaderPasses(runOnce, { name: 'the expiry check', log, isLeader }) };
}
