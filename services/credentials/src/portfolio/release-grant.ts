import { decideRevoke, type StoredRecipientAccount } from '@rsd/domain';
import { ApiError, type Publication, runCommand } from '@rsd/platform';
import type { UseCaseDeps } from '../authorizations/use-case-deps';

/**
 * Decision 42: the recipient leaves a grant its account holds. It ends as a revocation does, with the
 * reason `released_by_recipient`, so the organization sees who ended it. Idempotent: a grant that has
 * ended already stays as it is. A grant the account does not hold is unknown to it.
 */
export async function releaseGrant(deps: UseCaseDeps, account: StoredRecipientAccount, clientId: string): Promise<Publication> {
  const { publication } = await runCommand(deps, deps.origin, {
    what: 'release',
    context: { accountId: account.accountId, clientId },
    load: async () => {
      const current = await deps.store.findByClientId(clientId);
      if (!current || current.recipientAccountId !== account.accountId) {
        throw new ApiError('AUTHORIZATION_NOT_FOUND', 'This account holds no such grant');
      }
      return current;
    },
    decide: (current) => {
      const decision = decideRevoke(current, { id: deps.newEventId(), time: deps.clock.now() }, 'released_by_recipient');
      if (decision.outcome === 'unchanged') return { answer: undefined };
      return {
        write: { authorization: decision.record, expectedRevision: current.revision, events: [decision.event] },
        answer: undefined,
        written: () =>
          deps.log.info(
            { accountId: account.accountId, clientId, organizationId: current.organizationId },
            'grant released by its recipient',
          ),
      };
    },
  });
  return publication ?? 'pending';
}
