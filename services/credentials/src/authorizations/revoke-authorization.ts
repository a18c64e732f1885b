import type { Authorization } from '@rsd/contracts';
import { decideRevoke } from '@rsd/domain';
import { outboxEntryOf } from '../outbox/outbox-entry';
import { publishOwedEvents, type Publication } from '../outbox/outbox-relay';
import { findOwnAuthorization, withUsage } from './find-authorizations';
import { LOST_TO_A_CONCURRENT_CHANGE, retryOnConflict } from './retry-on-conflict';
import type { UseCaseDeps } from './use-case-deps';

export interface Revocation {
  authorization: Authorization;
  /**
   * `published`: the Revoked event is in the event log, so every read-API replica enforces it within
   * the 1 s bound (decision 29). `pending`: it is stored and owed; a replica that cannot reach the log
   * stops serving within its staleness bound, and the relay publishes the event when the log is back.
   */
  publication: Publication;
}

export function revokeAuthorization(deps: UseCaseDeps, organizationId: string, clientId: string): Promise<Revocation> {
  return retryOnConflict(
    async () => {
      const current = await findOwnAuthorization(deps.store, organizationId, clientId);
      const now = deps.clock.now();
      const decision = decideRevoke(current, { id: deps.newEventId(), time: now });
      // Revoked before, perhaps while the log was down: its event may still be owed, so ask again.
      const record = decision.outcome === 'unchanged' ? current : decision.record;
      if (
        decision.outcome !== 'unchanged' &&
        !(await deps.store.update(decision.record, current.revision, [outboxEntryOf(decision.event)]))
      ) {
        return LOST_TO_A_CONCURRENT_CHANGE;
      }
      return {
        authorization: await withUsage(deps, record, now),
        publication: await publishOwedEvents(deps.relay, deps.log, deps.publishDeadlineMs),
      };
    },
    { log: deps.log, what: 'revoke', context: { organizationId, clientId } },
  );
}
