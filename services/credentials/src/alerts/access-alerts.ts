import { randomUUID } from 'node:crypto';
import type { AccessRecord } from '@rsd/contracts';
import { decideAlerts, observeAccess, type StoredAuthorization } from '@rsd/domain';
import { type Logger, type OutboxRelay, runCommand, type CommandDeps } from '@rsd/platform';
import type { AuthorizationStore, Clock } from '@rsd/ports';

export interface AccessAlertsDeps {
  store: Pick<AuthorizationStore, 'findByClientId'> & CommandDeps['store'];
  relay: Pick<OutboxRelay, 'flush'>;
  clock: Clock;
  log: Logger;
  newEventId?: () => string;
}

/** Grants whose record was seen last, so that steady reads from known addresses cost no lookup. */
const RECORDS_REMEMBERED = 10_000;
const ATTEMPTS = 3;

/**
 * Decision 44's alerts from the access log: each batch's records, per grant, read against the
 * grant's record with the domain's rules (`observeAccess`); what changed is written to the record
 * with an `AuthorizationAlerted` event per alert, in one write. The records seen last are kept: a
 * batch that changes nothing even against them (the usual case) needs no read at all. Kept records
 * can only be older than the stored ones, and an older record makes more changes, never fewer, so
 * anything that may be news is always read again from the store.
 */
export function accessAlerts({
  store,
  relay,
  clock,
  log,
  newEventId = randomUUID,
}: AccessAlertsDeps): (records: readonly AccessRecord[]) => Promise<void> {
  const remembered = new Map<string, StoredAuthorization>();
  const remember = (record: StoredAuthorization) => {
    remembered.delete(record.clientId);
    remembered.set(record.clientId, record);
    if (remembered.size > RECORDS_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
  };

  async function observeGrant(clientId: string, records: readonly AccessRecord[]): Promise<number> {
    const now = clock.now();
    const known = remembered.get(clientId);
    if (known && observeAccess(known, records, now) === undefined) return 0;
    // Alerts are no one's change (decision 54): written without an actor, and published once per batch.
    const { answer } = await runCommand({ store, relay, log }, undefined, {
      what: 'alerts of an access-log batch',
      context: { clientId },
      publish: 'none',
      attempts: ATTEMPTS,
      exhausted: () => {
        log.warn({ clientId }, 'alerts of an access-log batch lost to concurrent changes of the grant');
        return 0;
      },
      load: () => store.findByClientId(clientId),
      decide: (record) => {
        if (!record) return { answer: 0 };
        const observed = observeAccess(record, records, now);
        if (!observed) {
          remember(record);
          return { answer: 0 };
        }
        const decided = decideAlerts(record, observed, newEventId);
        return {
          write: { authorization: decided.record, expectedRevision: record.revision, events: decided.events },
          answer: decided.events.length,
          written: () => remember(decided.record),
        };
      },
    });
    return answer;
  }

  return async (records) => {
    const byGrant = new Map<string, AccessRecord[]>();
    for (const record of records) {
      const grant = byGrant.get(record.clientId);
      if (grant) grant.push(record);
      else byGrant.set(record.clientId, [record]);
    }
    let raised = 0;
    for (const [clientId, grantRecords] of byGrant) {
      // One grant's failure never holds up the stream: what it missed is found again by its next reads
      // (a first use or an address not written down is still news then).
      try {
        raised += await observeGrant(clientId, grantRecords);
      } catch (error) {
        log.error({ err: error, clientId }, 'alerts of an access-log batch not raised for a grant');
      }
    }
    if (raised > 0) {
      log.info({ alerts: raised }, 'alerts raised from the access log');
      await relay.flush().catch((error: unknown) => log.warn({ err: error }, 'alerts stored; the relay publishes them when it can'));
    }
  };
}
