import type { Authorization } from '@rsd/contracts';
import { decideRevoke } from '@rsd/domain';
import { runCommand } from '@rsd/platform';
import type { Publication } from '@rsd/platform';
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

export async function revokeAuthorization(deps: UseCaseDeps, organizationId: string, clientId: string): Promise<Revocation> {
  const { answer: record, publication } = await runCommand(deps, deps.origin, {
    what: 'revoke',
    context: { organizationId, clientId },
    load: () => findOwnAuthorization(deps.store, organizationId, clientId),
    decide: (current) => {
      const decision = decideRevoke(current, { id: deps.newEventId(), time: deps.clock.now() });
      // Revoked before, perhaps while the log was down: nothing to write, but its event may still be owed, so the runner asks again.
      if (decision.outcome === 'unchanged') return { answer: current };
      return {
        write: { authorization: decision.record, expectedRevision: current.revision, events: [decision.event] },
        answer: decision.record,
      };
    },
  });
  return { authorization: await withUsage(deps, record, deps.clock.now()), publication: publication ?? 'pending' };
}
