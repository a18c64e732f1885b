import type { Authorization, RevocationReason } from '@rsd/contracts';
import { decideRevoke, type StoredAuthorization } from '@rsd/domain';
import { runCommand, type Command, type Publication } from '@rsd/platform';
import { findOwnAuthorization, withUsage } from './find-authorizations';
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

/** The organization's revocation, or (decision 54) an access review's, `reason` saying which. */
export async function revokeAuthorization(
  deps: UseCaseDeps,
  organizationId: string,
  clientId: string,
  reason: RevocationReason = 'organization',
): Promise<Revocation> {
  const { answer: record, publication } = await runCommand(deps, deps.origin, revokeCommand(deps, organizationId, clientId, reason));
  return { authorization: await withUsage(deps, record, deps.clock.now()), publication: publication ?? 'pending' };
}

/** The revoke of one grant as a command, for the API and for an access review's due time alike. */
export function revokeCommand(
  deps: Pick<UseCaseDeps, 'store' | 'clock' | 'newEventId'>,
  organizationId: string,
  clientId: string,
  reason: RevocationReason,
): Command<StoredAuthorization, StoredAuthorization> {
  return {
    what: 'revoke',
    context: { organizationId, clientId },
    load: () => findOwnAuthorization(deps.store, organizationId, clientId),
    decide: (current) => {
      const decision = decideRevoke(current, { id: deps.newEventId(), time: deps.clock.now() }, reason);
      // Revoked before, perhaps while the log was down: nothing to write, but its event may still be owed, so the runner asks again.
      if (decision.outcome === 'unchanged') return { answer: current };
      return {
        write: { authorization: decision.record, expectedRevision: current.revision, events: [decision.event] },
        answer: decision.record,
      };
    },
  };
}
