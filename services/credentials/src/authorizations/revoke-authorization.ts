import type { Authorization } from '@rsd/contracts';
import { ApiError } from '@rsd/platform';
import { decideRevoke } from '@rsd/domain';
import { outboxEntryOf } from '../outbox/outbox-entry';
import { publishOwedEvents, type Publication } from '../outbox/outbox-relay';
import { findOwnAuthorization, withUsage } from './find-authorizations';
import type { UseCaseDeps } from './use-case-deps';

/** Enough for a revoke racing the expiry scheduler or another revoke; more means something is wrong. */
const MAX_ATTEMPTS = 5;

export interface Revocation {
  authorization: Authorization;
  /**
   * `published`: the Revoked event is in the event log, so every read-API replica enforces it within
   * the 1 s bound (decision 29). `pending`: it is stored and owed; a replica that cannot reach the log
   * stops serving within its staleness bound, and the relay publishes the event when the log is back.
   */
  publication: Publication;
}

export async function revokeAuthorization(deps: UseCaseDeps, organizationId: string, clientId: string): Promise<Revocation> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const current = await findOwnAuthorization(deps.store, organizationId, clientId);
    const now = deps.clock.now();
    const decision = decideRevoke(current, { id: deps.newEventId(), time: now });
    if (decision.outcome === 'unchanged') {
      // Revoked before, perhaps while the log was down: its event may still be owed, so ask again.
      return {
        authorization: await withUsage(deps, current, now),
        publication: await publishOwedEvents(deps.relay, deps.log, deps.publishDeadlineMs),
      };
    }
    // Someone else changed the record since we read it: read again and decide again.
    const written = await deps.store.update(decision.record, current.revision, [outboxEntryOf(decision.event)]);
    if (written) {
      return {
        authorization: await withUsage(deps, decision.record, now),
        publication: await publishOwedEvents(deps.relay, deps.log, deps.publishDeadlineMs),
      };
    }
  }
  deps.log.warn({ organizationId, clientId, attempts: MAX_ATTEMPTS }, 'revoke kept losing to concurrent changes');
  throw new ApiError('SERVICE_UNAVAILABLE', 'The authorization is being changed concurrently; try again');
}
