import { randomUUID } from 'node:crypto';
import {
  CLAIM_VALID_SECONDS,
  issueClaimLinkRequestSchema,
  type AuthorizationWithClaimLink,
  type ClaimedKey,
  type ClaimGrant,
  type ClaimedIntoNewAccount,
  type JoinedAccount,
} from '@rsd/contracts';
import {
  portfolioCustomerOf,
  CLAIM_TOKEN_PATTERN,
  claimLinkStateOf,
  decideClaim,
  decideJoinAccount,
  decideNewClaimLink,
  digestApiKey,
  digestClaimToken,
  digestsMatch,
  type ClaimLinkState,
  type StoredAuthorization,
  type Origin,
  type StoredRecipientAccount,
} from '@rsd/domain';
import { ApiError, parsedBody, runCommand, type OriginOf, type Publication } from '@rsd/platform';
import type { AccessLogStore } from '@rsd/ports';
import { requireCurrentKey } from '@rsd/recipient-access';
import { findOwnAuthorization, withUsage } from '../authorizations/find-authorizations';
import type { CredentialGenerator, UseCaseDeps } from '../authorizations/use-case-deps';
import { claimUrlOf } from './claim-url';
import { authenticateAccount, openAccount, type AccountGenerator } from '../portfolio/recipient-accounts';

export interface ClaimDeps extends UseCaseDeps {
  /** The claim is listed in the authorization's access log (decision 38), written here by the credentials service. */
  accessLog: Pick<AccessLogStore, 'add'>;
}

/** Who claims: as the service determines the address, and the request's id, for the access log and the audit trail. */
export interface Claimant {
  clientAddress: string | null;
  requestId: string;
  /** Decision 54: how the claim was asked for (the CLI, an SDK, or the API itself). */
  via?: Origin['actor']['via'];
}

/** Decision 54: the link's holder is the grant's recipient, known by the Client ID the link names (or the account it joins). */
function claimantOrigin(who: Claimant, id: string): Origin {
  return { actor: { type: 'recipient', id, via: who.via ?? 'api' }, requestId: who.requestId, address: who.clientAddress };
}

export interface Claim {
  claimed: ClaimedKey;
  grant: ClaimGrant;
  /** `pending`: the key is issued and recorded, and works once its event reaches the event log. */
  publication: Publication;
}

const NOT_FOUND_MESSAGE = 'No such claim link. It may have been mistyped, or replaced by a newer link.';

/** The open link's grant (decision 38's GET): consumes nothing, so a mail scanner that opens the link changes nothing. */
export async function describeClaim(deps: Pick<UseCaseDeps, 'store' | 'clock'>, token: string): Promise<ClaimGrant> {
  const record = await findByToken(deps, token);
  const state = claimLinkStateOf(record, deps.clock.now());
  if (state !== 'open') throw refusalOf(state);
  return grantOf(record);
}

/**
 * Decision 38's POST: the key is made now, digested at once, shown once. The record changes at the
 * revision it was read at, so of two claims at once exactly one wins; the other reads it again and
 * finds the link used.
 */
export async function claimKey(
  deps: ClaimDeps,
  generate: Pick<CredentialGenerator, 'apiKey'>,
  token: string,
  who: Claimant,
): Promise<Claim> {
  const origin = (current: StoredAuthorization) => claimantOrigin(who, current.clientId);
  const {
    current,
    made: apiKey,
    publication,
  } = await spendLink(deps, who, token, { what: 'claim', context: {}, origin }, (current, stamp) => {
    const key = generate.apiKey();
    return { made: key, decision: decideClaim(current, { newKeyDigest: digestApiKey(key), clientAddress: who.clientAddress }, stamp) };
  });
  deps.log.info({ organizationId: current.organizationId, clientId: current.clientId }, 'key claimed by its link');
  return { claimed: { clientId: current.clientId, apiKey }, grant: grantOf(current), publication };
}

/** Decision 42: where a claim puts the grant: an account the caller holds the key of, or a new one. */
export type AccountChoice = { accountKey: string } | { accountName: string | null };

export interface AccountClaim {
  joined: ClaimedIntoNewAccount | JoinedAccount;
  grant: ClaimGrant;
  publication: Publication;
}

/**
 * Decision 42's claim: the grant joins a recipient account instead of getting a key. With an
 * account key the grant joins that account (a key that does not verify changes nothing); without,
 * a new account is opened once the link is known to be open, and its key shown once. Should the
 * link be spent by a concurrent claim between the two, the new account stays empty and its key is
 * never shown: nobody can use it.
 */
export async function claimIntoAccount(
  deps: ClaimDeps,
  generate: AccountGenerator,
  token: string,
  who: Claimant,
  choice: AccountChoice,
): Promise<AccountClaim> {
  const existing = 'accountKey' in choice ? await accountJoinedBy(deps, choice.accountKey) : undefined;
  const first = await findByToken(deps, token);
  const state = claimLinkStateOf(first, deps.clock.now());
  if (state !== 'open') {
    const refusal = refusalOf(state);
    await recordClaim(deps, first.clientId, who, deps.clock.now(), refusal.status, refusal.code);
    throw refusal;
  }
  const opened = existing ? undefined : await openAccount(deps, generate, 'accountName' in choice ? choice.accountName : null);
  const account = existing ?? opened?.account;
  if (!account) throw new Error('no account to claim into');
  const command = {
    what: 'claim into an account',
    context: { accountId: account.accountId },
    origin: claimantOrigin(who, account.accountId),
  };
  const { current, publication } = await spendLink(deps, who, token, command, (current, stamp) => ({
    made: undefined,
    decision: decideJoinAccount(
      current,
      { accountId: account.accountId, accountName: account.name, clientAddress: who.clientAddress },
      stamp,
    ),
  }));
  deps.log.info(
    { organizationId: current.organizationId, clientId: current.clientId, accountId: account.accountId, newAccount: !existing },
    'grant claimed into a recipient account',
  );
  const joined = opened
    ? { accountId: account.accountId, accountKey: opened.accountKey, clientId: current.clientId }
    : { accountId: account.accountId, clientId: current.clientId };
  return { joined, grant: grantOf(current), publication };
}

/** Decision 38: a new link for an unclaimed authorization; the old link is unknown from now on. */
export async function issueClaimLink(
  deps: UseCaseDeps,
  generate: Pick<CredentialGenerator, 'claimToken'>,
  organizationId: string,
  clientId: string,
  body: unknown,
  claimLinkBase: string,
): Promise<AuthorizationWithClaimLink> {
  const validSeconds = validSecondsOf(body);
  // The link's token is a secret, and the new link is in no event: nothing to publish.
  const { answer } = await runCommand(deps, deps.origin, {
    what: 'claim link',
    context: { organizationId, clientId },
    publish: 'none',
    load: () => findOwnAuthorization(deps.store, organizationId, clientId),
    decide: (current) => {
      const now = deps.clock.now();
      const token = generate.claimToken();
      const decision = decideNewClaimLink(current, { tokenDigest: digestClaimToken(token), validSeconds }, now);
      if (decision.outcome === 'claimed') {
        throw new ApiError('KEY_ALREADY_CLAIMED', 'The key of this authorization has been claimed; rotate it to issue a new one');
      }
      if (decision.outcome === 'inactive') {
        throw new ApiError('AUTHORIZATION_INACTIVE', 'The authorization has been revoked or has expired; no claim link is issued for it');
      }
      if (decision.outcome === 'offered') {
        throw new ApiError(
          'KEY_HELD_BY_ACCOUNT',
          'This grant is offered to a recipient account, whose key reads it once the account accepts it; it has no key or claim link of its own',
        );
      }
      return {
        write: { authorization: decision.record, expectedRevision: current.revision, events: [] },
        answer: { record: decision.record, token, now },
      };
    },
  });
  const { record, token, now } = answer;
  return {
    ...(await withUsage(deps, record, now)),
    claim: { url: claimUrlOf(claimLinkBase, token), expiresAt: record.claimExpiresAt ?? now.toISOString() },
  };
}

/**
 * A token of the wrong shape is unknown without a lookup. The lookup goes by the token's digest;
 * the digests are compared again in constant time, so a store's index is never the only check.
 */
/** Decision 50: a grant joins an account by its current key; the previous one of an overlap only reads. */
async function accountJoinedBy(deps: ClaimDeps, accountKey: string): Promise<StoredRecipientAccount> {
  const caller = await authenticateAccount(deps, accountKey);
  requireCurrentKey(caller);
  return caller.account;
}

async function findByToken(deps: Pick<UseCaseDeps, 'store'>, token: string): Promise<StoredAuthorization> {
  if (!CLAIM_TOKEN_PATTERN.test(token)) throw new ApiError('CLAIM_LINK_NOT_FOUND', NOT_FOUND_MESSAGE);
  const digest = digestClaimToken(token);
  const record = await deps.store.findByClaimToken(digest);
  if (!record?.claimTokenDigest || !digestsMatch(record.claimTokenDigest, digest)) {
    throw new ApiError('CLAIM_LINK_NOT_FOUND', NOT_FOUND_MESSAGE);
  }
  return record;
}

/**
 * What both claims do: the link `token` names is spent as `decide` says, at the revision it was read
 * at; a link no longer open is refused, and the refusal, or else the claim, recorded in the access log.
 */
async function spendLink<T>(
  deps: ClaimDeps,
  who: Claimant,
  token: string,
  command: { what: string; context: object; origin: OriginOf<StoredAuthorization> },
  decide: (current: StoredAuthorization, stamp: { id: string; time: Date }) => { made: T; decision: ClaimDecision },
): Promise<{ current: StoredAuthorization; made: T; publication: Publication }> {
  const { answer, publication } = await runCommand(deps, command.origin, {
    ...command,
    load: () => findByToken(deps, token),
    decide: async (current) => {
      const now = deps.clock.now();
      const { made, decision } = decide(current, { id: deps.newEventId(), time: now });
      if (decision.outcome !== 'changed') {
        const refusal = refusalOf(decision.outcome);
        await recordClaim(deps, current.clientId, who, now, refusal.status, refusal.code);
        throw refusal;
      }
      const write = { authorization: decision.record, expectedRevision: current.revision, events: [decision.event] };
      return { write, answer: { current, now, made } };
    },
  });
  await recordClaim(deps, answer.current.clientId, who, answer.now, 201, null);
  return { current: answer.current, made: answer.made, publication: publication ?? 'pending' };
}

type ClaimDecision = ReturnType<typeof decideClaim> | ReturnType<typeof decideJoinAccount>;

function refusalOf(state: Exclude<ClaimLinkState, 'open'>): ApiError {
  return state === 'used'
    ? new ApiError('CLAIM_LINK_USED', 'This claim link has already been used. Ask the organization that sent it for a new one.')
    : new ApiError(
        'CLAIM_LINK_EXPIRED',
        'This claim link has expired, or the access it grants has ended. Ask the organization that sent it for a new one.',
      );
}

function grantOf(record: StoredAuthorization): ClaimGrant {
  return {
    ...portfolioCustomerOf(record),
    recipientName: record.recipientName,
    claimExpiresAt: record.claimExpiresAt ?? record.createdAt,
  };
}

/**
 * The access log's entry for a claim attempt on a link that names this authorization: the claim
 * (201) and the refused uses (410). The key is made already when this runs: a store that cannot take
 * the entry now costs the entry, never the key.
 */
async function recordClaim(deps: ClaimDeps, clientId: string, who: Claimant, at: Date, status: number, code: string | null): Promise<void> {
  try {
    await deps.accessLog.add([
      {
        id: randomUUID(),
        clientId,
        at: at.toISOString(),
        resource: 'claim',
        status,
        code,
        clientAddress: who.clientAddress,
        requestId: who.requestId,
      },
    ]);
  } catch (error) {
    deps.log.warn({ err: error, clientId }, 'claim not recorded in the access log');
  }
}

function validSecondsOf(body: unknown): number {
  return parsedBody(issueClaimLinkRequestSchema, body ?? {}).claimValidSeconds ?? CLAIM_VALID_SECONDS.default;
}
