import { attemptOnce, drainDue, startRetention, type CommandDeps, type Logger, type PeriodicJob } from '@rsd/platform';
import { withoutAlertAddressesBefore } from '@rsd/domain';
import type { AccessLogStore, AuditLogStore, AuthorizationStore, Clock } from '@rsd/ports';
import type { CredentialsConfig } from '../config';

export interface RetentionDeps {
  config: Pick<CredentialsConfig, 'ACCESS_LOG_RETENTION_DAYS' | 'AUDIT_RETENTION_DAYS' | 'ALERT_ADDRESS_RETENTION_DAYS'>;
  store: AuthorizationStore;
  relay: CommandDeps['relay'];
  accessLog: Pick<AccessLogStore, 'prune'>;
  auditLog: Pick<AuditLogStore, 'prune'>;
  clock: Clock;
  log: Logger;
  /** Between passes; an hour unless told. */
  intervalMs?: number;
}

const PAGE_SIZE = 100;

/**
 * What this service keeps for a time only (decisions 21 and 56), each pass at start and hourly: access
 * records older than ACCESS_LOG_RETENTION_DAYS, audit entries older than AUDIT_RETENTION_DAYS, and the
 * addresses grants keep for their alerts older than ALERT_ADDRESS_RETENTION_DAYS. On every replica:
 * each pass is idempotent, and a grant's change is written at its revision, so two replicas cannot undo
 * each other's work or anyone else's.
 */
export function startRetentions(deps: RetentionDeps): PeriodicJob {
  const { config, clock, log, intervalMs } = deps;
  const every = (name: string, retentionDays: number, prune: (before: Date, now: Date) => Promise<unknown>) =>
    startRetention({ name, log, clock, retentionDays, prune, ...(intervalMs === undefined ? {} : { intervalMs }) });
  const jobs = [
    // Decision 21, by date on the embedded runtime (MongoDB's TTL index does it too; FerretDB's has none).
    every('pruning the access log', config.ACCESS_LOG_RETENTION_DAYS, (before, now) => deps.accessLog.prune(before, now)),
    every('pruning the audit trail', config.AUDIT_RETENTION_DAYS, (before) => deps.auditLog.prune(before)),
    every('erasing the addresses kept for alerts', config.ALERT_ADDRESS_RETENTION_DAYS, (before) =>
      eraseAlertAddressesBefore({ store: deps.store, relay: deps.relay, log }, before),
    ),
  ];
  return { stop: async () => void (await Promise.all(jobs.map((job) => job.stop()))) };
}

/**
 * Every grant's seen addresses and alert addresses from before `before` erased (`withoutAlertAddressesBefore`),
 * each grant written at its revision with no event: nothing anyone hears of changed. A grant changed
 * meanwhile is found again by the next pass. Resolves to how many grants were written.
 */
export async function eraseAlertAddressesBefore(deps: CommandDeps & { store: AuthorizationStore }, before: Date): Promise<number> {
  const erased = await drainDue(
    PAGE_SIZE,
    (limit) => deps.store.findWithAlertAddressesBefore(before, limit),
    (record) =>
      attemptOnce(deps, undefined, record, {
        what: 'alert addresses past their retention',
        context: { clientId: record.clientId },
        decide: () => {
          const next = withoutAlertAddressesBefore(record, before);
          if (!next) return { answer: false };
          return { write: { authorization: next, expectedRevision: record.revision, events: [] }, answer: true };
        },
      }),
  );
  if (erased > 0) deps.log.info({ grants: erased, before: before.toISOString() }, 'addresses kept for alerts past their retention erased');
  return erased;
}
