import type { Authorization, AuthorizationWithClaimLink, CreatedAuthorization } from '@rsd/contracts';
import {
  acceptsOffersFrom,
  authorizationCreated,
  claimLinkExpiry,
  digestApiKey,
  digestClaimToken,
  NO_USAGE,
  toAuthorization,
  type StoredAuthorization,
  type ValidCreateRequest,
} from '@rsd/domain';
import { ApiError, runCommand } from '@rsd/platform';
import { claimUrlOf } from '../claims/claim-url';
import { validateCreateRequest } from './create-authorization-request';
import type { CredentialGenerator, UseCaseDeps } from './use-case-deps';

/**
 * The one place the raw API key exists: it is digested at once and returned once. With a claim link
 * (decision 38) no key exists yet: the link's token is made here, digested at once and returned once.
 */
export async function createAuthorization(
  deps: UseCaseDeps,
  generate: CredentialGenerator,
  organizationId: string,
  body: unknown,
  /** Where claim links point: the credentials service as its callers reach it. */
  claimLinkBase: string,
): Promise<CreatedAuthorization | AuthorizationWithClaimLink | Authorization> {
  const now = deps.clock.now();
  const request = validateCreateRequest(body, now);
  const clientId = generate.clientId();
  if (request.keyDelivery === 'account') {
    // Decision 50: offered to the account, no key and no link; it waits for the account's acceptance
    // unless the account accepts this organization's offers as they are made. An unknown account is a 404.
    const account = request.recipientAccountId ? await deps.store.findAccount(request.recipientAccountId) : undefined;
    if (!account) throw new ApiError('RECIPIENT_ACCOUNT_NOT_FOUND', 'No recipient account has this recipientAccountId');
    const offered = {
      ...newAuthorization({ organizationId, clientId, keyDigest: null, request, now }),
      offeredAccountId: account.accountId,
    };
    const record = acceptsOffersFrom(account, organizationId)
      ? { ...offered, recipientAccountId: account.accountId, recipientAccountName: account.name }
      : offered;
    await store(deps, record, now);
    // The answer tells the organization nothing of the account it did not know: not its name, even when it accepted at once.
    return { ...toAuthorization(record, now, NO_USAGE), recipientAccountName: null };
  }
  if (request.keyDelivery === 'claimLink') {
    const token = generate.claimToken();
    const claimExpiresAt = claimLinkExpiry(request.expiresAt, request.claimValidSeconds, now);
    const record = newAuthorization({ organizationId, clientId, keyDigest: null, request, now });
    await store(
      deps,
      { ...record, claimTokenDigest: digestClaimToken(token), claimExpiresAt, claimedAt: null, claimedFromAddress: null },
      now,
    );
    return { ...toAuthorization(record, now, NO_USAGE), claim: { url: claimUrlOf(claimLinkBase, token), expiresAt: claimExpiresAt } };
  }
  const apiKey = generate.apiKey();
  const record = newAuthorization({ organizationId, clientId, keyDigest: digestApiKey(apiKey), request, now });
  await store(deps, record, now);
  // A new Client ID: no read can have been made with it yet.
  return { ...toAuthorization(record, now, NO_USAGE), apiKey };
}

/** A new record: nothing to load or lose to, so one write with its Created event, then the wait for the log. */
async function store(deps: UseCaseDeps, record: StoredAuthorization, now: Date): Promise<void> {
  // A 201 either way: the key works from the moment its Created event reaches the read API, owed or not.
  await runCommand(deps, deps.origin, {
    what: 'create',
    context: { organizationId: record.organizationId, clientId: record.clientId },
    load: () => Promise.resolve(record),
    decide: (created) => ({
      write: {
        authorization: created,
        expectedRevision: null,
        events: [authorizationCreated(created, { id: deps.newEventId(), time: now })],
      },
      answer: undefined,
    }),
  });
}

function newAuthorization(fields: {
  organizationId: string;
  clientId: string;
  keyDigest: string | null;
  request: ValidCreateRequest;
  now: Date;
}): StoredAuthorization {
  const { organizationId, clientId, keyDigest, request, now } = fields;
  return {
    clientId,
    organizationId,
    recipientType: request.recipientType,
    recipientName: request.recipientName,
    scopes: request.scopes,
    keyDigest,
    previousKeyDigest: null,
    previousKeyExpiresAt: null,
    expiresAt: request.expiresAt,
    allowedCidrs: request.allowedCidrs,
    createdAt: now.toISOString(),
    revokedAt: null,
    expiredAt: null,
    revision: 1,
  };
}
