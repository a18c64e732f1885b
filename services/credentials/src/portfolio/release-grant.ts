import { decideRevoke, type StoredRecipientAccount } from '@rsd/domain';
import { ApiError } from '@rsd/platform';
import { LOST_TO_A_CONCURRENT_CHANGE, retryOnConflict } from '../authorizations/retry-on-conflict';
import type { UseCaseDeps } from '../authorizations/use-case-deps';
import { outboxEntryOf } from '../outbox/outbox-entry';
import { publishOwedEvents, type Publication } from '../outbox/outbox-relay';

/**
 * Decision 42: the recipient leaves a grant its account holds. It ends as a revocation does, with the
 * reason `released_by_recipient`, so the organization sees who ended it. Idempotent: a grant that has
 * ended already stays as it is. A grant the account does not hold is unknown to it.
 */
export function releaseGrant(deps: UseCaseDeps, account: StoredRecipientAccount, clientId: string): Promise<Publication> {
  return retryOnConflict(
    async () => {
      const current = await deps.store.findByClientId(clientId);
      if (!current || current.recipientAccountId !== account.accountId) {
        throw new ApiError('AUTHORIZATION_NOT_FOUND', 'This account holds no such grant');
      }
      const decision = decideRevoke(current, { id: deps.newEventId(), time: deps.clock.now() }, 'released_by_recipient');
      if (
        decision.outcome !== 'unchanged' &&
        !(await deps.store.update(decision.record, current.revision, [outboxEntryOf(decision.event)]))
      ) {
        return LOST_TO_A_CONCURRENT_CHANGE;
      }
      if (decision.outcome !== 'unchanged') {
        deps.log.info(
          { accountId: account.accountId, clientId, organizationId: current.organizationId },
          'grant released by its recipient',
        );
      }
      return publishOwedEvents(deps.relay, deps.log, deps.publishDeadlineMs);
    },
    { log: deps.log, what: 'release', context: { accountId: account.accountId, clientId } },
  );
}
