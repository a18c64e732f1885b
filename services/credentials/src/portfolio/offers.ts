import {
  autoAcceptSchema,
  type AuthorizationEvent,
  type AutoAccept,
  type PortfolioCustomer,
  type PortfolioOffer,
  type PortfolioOffersPage,
} from '@rsd/contracts';
import {
  portfolioCustomerOf,
  decideAcceptOffer,
  decideAutoAccept,
  decideDeclineOffer,
  hasExpired,
  type OfferAnswer,
  type StoredAuthorization,
  type StoredRecipientAccount,
} from '@rsd/domain';
import { ApiError, pageOf, parsedBody, runCommand, type Publication } from '@rsd/platform';
import { cursorAfter, type PortfolioQuery } from '@rsd/recipient-access';
import type { UseCaseDeps } from '../authorizations/use-case-deps';

/*
 * Decision 50: a grant an organization gives a recipient account (`keyDelivery: "account"`) is offered to
 * it, and the account answers: it accepts (and holds the grant from then on) or declines (and the grant
 * ends). An offer that is not the account's is unknown to it, whether or not it exists, so Client IDs
 * tell an account nothing of other accounts' offers.
 */

const NOT_FOUND = () => new ApiError('OFFER_NOT_FOUND', 'No offer to this account has this Client ID');

/**
 * A page of the account's offers that still wait for its answer, in Client ID order (descending) like the
 * portfolio's pages. An offer past its expiry that the expiry scheduler has not marked yet is left out,
 * so a page may hold fewer items than `limit`; the cursor still moves on.
 */
export async function listOffers(
  deps: Pick<UseCaseDeps, 'store' | 'clock'>,
  account: StoredRecipientAccount,
  query: PortfolioQuery,
): Promise<PortfolioOffersPage> {
  const now = deps.clock.now();
  const { items, next } = pageOf(
    await deps.store.listOffers(account.accountId, { limit: query.limit + 1, before: query.after }),
    query.limit,
  );
  return {
    items: items.filter((record) => !hasExpired(record.expiresAt, now)).map(offerOf),
    nextCursor: next ? cursorAfter(next.clientId) : null,
  };
}

/**
 * The account accepts the offer: the JoinedAccount event puts the grant into its portfolio, as a claim into
 * the account does. Accepting an offer the account already accepted answers the same (and publishes the
 * event if it is still owed), so a client may repeat it after a network failure.
 */
export async function acceptOffer(
  deps: UseCaseDeps,
  account: StoredRecipientAccount,
  clientId: string,
): Promise<{ customer: PortfolioCustomer; publication: Publication }> {
  const { record, publication } = await answerOffer(deps, account, clientId, 'accept', (current, stamp) =>
    decideAcceptOffer(current, account, stamp),
  );
  return { customer: portfolioCustomerOf(record), publication };
}

/** The account declines the offer: it ends as a revocation does (`declined_by_recipient`). Repeating it changes nothing. */
export async function declineOffer(deps: UseCaseDeps, account: StoredRecipientAccount, clientId: string): Promise<Publication> {
  const { publication } = await answerOffer(deps, account, clientId, 'decline', (current, stamp) =>
    decideDeclineOffer(current, account, stamp),
  );
  return publication;
}

/** One answer: load, decide, write at the revision read (again on a lost race), then publish what is owed. */
async function answerOffer(
  deps: UseCaseDeps,
  account: StoredRecipientAccount,
  clientId: string,
  answer: 'accept' | 'decline',
  decide: (current: StoredAuthorization, stamp: { id: string; time: Date }) => OfferAnswer<AuthorizationEvent>,
): Promise<{ record: StoredAuthorization; publication: Publication }> {
  const { answer: record, publication } = await runCommand(deps, deps.origin, {
    what: `offer ${answer}`,
    context: { accountId: account.accountId, clientId },
    // The accepted offer's event is a grant joining an account, as a claim's is: the action says which.
    action: answer === 'accept' ? 'authorization.offer_accepted' : 'authorization.offer_declined',
    load: async () => {
      const current = await deps.store.findByClientId(clientId);
      if (!current) throw NOT_FOUND();
      return current;
    },
    decide: (current) => {
      const decision = decide(current, { id: deps.newEventId(), time: deps.clock.now() });
      if (decision.outcome === 'notOffered') throw NOT_FOUND();
      if (decision.outcome === 'notPending') {
        throw new ApiError(
          'OFFER_NOT_PENDING',
          answer === 'accept'
            ? 'This offer has ended (revoked, declined or expired); nothing was accepted'
            : 'This offer no longer waits for an answer: it has ended, or the account accepted it (leave it with DELETE /v1/portfolio/customers/{clientId})',
        );
      }
      if (decision.outcome !== 'changed') return { answer: decision.record };
      return {
        write: { authorization: decision.record, expectedRevision: current.revision, events: [decision.event] },
        answer: decision.record,
        written: () =>
          deps.log.info(
            { accountId: account.accountId, clientId, organizationId: current.organizationId },
            answer === 'accept' ? 'offer accepted by its recipient account' : 'offer declined by its recipient account',
          ),
      };
    },
  });
  return { record, publication: publication ?? 'pending' };
}

export function autoAcceptOf(account: StoredRecipientAccount): AutoAccept {
  return { organizationIds: [...(account.autoAcceptOrganizationIds ?? [])] };
}

/**
 * The organizations whose offers the account accepts as they are made, replacing the list before. Kept
 * with the account and in no event: only this service acts on it, when an offer is made.
 */
export async function setAutoAccept(deps: UseCaseDeps, accountId: string, body: unknown): Promise<AutoAccept> {
  const { organizationIds } = parsedBody(autoAcceptSchema, body);
  // Kept with the account, in no event: nothing to publish, and no one's change to the organization's grants.
  const { answer } = await runCommand(deps, undefined, {
    what: 'auto-accept',
    context: { accountId },
    publish: 'none',
    load: async () => {
      const current = await deps.store.findAccount(accountId);
      if (!current) throw new ApiError('INVALID_API_KEY', 'The x-api-key header does not hold a valid recipient account key');
      return current;
    },
    decide: (current) => {
      const changed = decideAutoAccept(current, organizationIds);
      return { write: { account: changed, expectedRevision: current.revision, events: [] }, answer: changed };
    },
  });
  deps.log.info({ accountId, organizations: organizationIds.length }, 'account auto-accept list set');
  return autoAcceptOf(answer);
}

function offerOf(record: StoredAuthorization): PortfolioOffer {
  return {
    ...portfolioCustomerOf(record),
    recipientName: record.recipientName,
    allowedCidrs: record.allowedCidrs ? [...record.allowedCidrs] : null,
    offeredAt: record.createdAt,
  };
}
