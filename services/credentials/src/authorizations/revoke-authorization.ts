import type { Authorization } from '@rsd/contracts';
import { ApiError } from '@rsd/platform';
import { decideRevoke, toAuthorization } from '@rsd/domain';
import { outboxEntryOf } from '../outbox/outbox-entry';
import { publishOwedEvents } from '../outbox/outbox-relay';
import { findOwnAuthorization } from './find-authorizations';
import type { UseCaseDeps } from './use-case-deps';

/** Enough for a revoke racing the expiry scheduler or another revoke; more means something is wrong. */
const MAX_ATTEMPTS = 5;

export async function revokeAuthorization(deps: UseCaseDeps, organizationId: string, clientId: string): Promise<Authorization> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const current = await findOwnAuthorization(deps.store, organizationId, clientId);
    const now = deps.clock.now();
    const decision = decideRevoke(current, { id: deps.newEventId(), time: now });
    if (decision.outcome === 'unchanged') return toAuthorization(current, now);
    // Someone else changed the record since we read it: read again and decide again.
    const written = await deps.store.update(decision.record, current.revision, [outboxEntryOf(decision.event)]);
    if (written) {
      await publishOwedEvents(deps.relay, deps.log);
      return toAuthorization(decision.record, now);
    }
  }
  deps.log.warn({ organizationId, clientId, attempts: MAX_ATTEMPTS }, 'revoke kept losing to concurrent changes');
  throw new ApiError('SERVICE_UNAVAILABLE', 'The authorization is being changed concurrently; try again');
}
