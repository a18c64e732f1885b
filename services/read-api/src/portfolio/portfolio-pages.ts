import type { Portfolio, PortfolioCustomersPage, PortfolioLeftOut, PortfolioPillarsPage, PortfolioScoresPage, Scope } from '@rsd/contracts';
import {
  portfolioCustomerOf,
  ACTIVE_GRANTS,
  activeGrantSortKey,
  addressAllowed,
  credentialView,
  currentScoreView,
  grantActive,
  isActive,
  portfolioGrantView,
  type CredentialView,
  type PortfolioGrantView,
  type RecipientAccountView,
} from '@rsd/domain';
import type { ViewStore } from '@rsd/ports';
import { cursorAfter, type PortfolioQuery } from '@rsd/recipient-access';

/** The most grants `/portfolio` counts: an account's whole active range is one index range, bounded all the same. */
const MOST_GRANTS_COUNTED = 100_000;

/** Who reads the page: the account, from which address (decision 22 applies per grant), and when. */
export interface PortfolioReader {
  account: RecipientAccountView;
  clientAddress: string | undefined;
  now: Date;
}

/** A page of grants the account holds and may read now, and where the next page starts. */
interface GrantPage {
  grants: { grant: PortfolioGrantView; credential: CredentialView }[];
  nextCursor: string | null;
}

export async function portfolioOf(views: ViewStore, { account, now }: PortfolioReader): Promise<Portfolio> {
  const grants = await views.list(portfolioGrantView, account.accountId, { limit: MOST_GRANTS_COUNTED, atLeast: ACTIVE_GRANTS });
  return { accountId: account.accountId, name: account.name, customers: grants.filter((grant) => grantActive(grant, now)).length };
}

/** Every grant of the page the reader's address may read (the grant's allow list, decision 22), and how many it may not. */
export async function customersPage(views: ViewStore, reader: PortfolioReader, query: PortfolioQuery): Promise<PortfolioCustomersPage> {
  const page = await grantPage(views, reader, query);
  const { within, leftOut } = withinAddress(page.grants, reader.clientAddress);
  return { items: within.map(({ grant }) => portfolioCustomerOf(grant)), nextCursor: page.nextCursor, leftOut };
}

/** Decision 42: the latest score of every grant on the page that holds `qr_score` and has one; two more lookups in all. */
export async function scoresPage(views: ViewStore, reader: PortfolioReader, query: PortfolioQuery): Promise<PortfolioScoresPage> {
  const { readable, nextCursor, leftOut } = await readablePage(views, reader, query, 'qr_score');
  const items = readable.flatMap(({ clientId, score }) =>
    score ? [{ clientId, scoreDate: score.scoreDate, score: score.score, grade: score.grade }] : [],
  );
  return { items, nextCursor, leftOut };
}

export async function pillarsPage(views: ViewStore, reader: PortfolioReader, query: PortfolioQuery): Promise<PortfolioPillarsPage> {
  const { readable, nextCursor, leftOut } = await readablePage(views, reader, query, 'pillar_breakdown');
  const items = readable.flatMap(({ clientId, score }) =>
    score ? [{ clientId, scoreDate: score.scoreDate, pillarScores: { ...score.pillarScores } }] : [],
  );
  return { items, nextCursor, leftOut };
}

/**
 * The grants of the page whose data this request may read: those holding the scope whose allow list
 * admits the caller's address. A grant without the scope is not the address's doing, so only those
 * with it count as left out for the address. No lookup beyond the page's own.
 */
export async function readableGrants(views: ViewStore, reader: PortfolioReader, query: PortfolioQuery, scope: Scope) {
  const page = await grantPage(views, reader, query);
  const { within: readable, leftOut } = withinAddress(
    page.grants.filter(({ credential }) => credential.scopes.includes(scope)),
    reader.clientAddress,
  );
  return { readable, nextCursor: page.nextCursor, leftOut };
}

/**
 * The readable grants of the page (readableGrants), each with its organization's latest score: one
 * read of the scores for the whole page, whatever its size.
 */
async function readablePage(views: ViewStore, reader: PortfolioReader, query: PortfolioQuery, scope: Scope) {
  const { readable, nextCursor, leftOut } = await readableGrants(views, reader, query, scope);
  const scores = await views.getMany(currentScoreView, [...new Set(readable.map(({ credential }) => credential.organizationId))]);
  return {
    readable: readable.map(({ grant, credential }) => ({ clientId: grant.clientId, score: scores.get(credential.organizationId) })),
    nextCursor,
    leftOut,
  };
}

/**
 * A grant's address limits hold for every path its data takes: of the grants in hand, those whose allow
 * list admits the reader's address, and how many were left out. No lookup: each grant's credential
 * is already read.
 */
function withinAddress<Held extends { credential: CredentialView }>(
  grants: readonly Held[],
  clientAddress: string | undefined,
): { within: Held[]; leftOut: PortfolioLeftOut } {
  const within = grants.filter(({ credential }) => addressAllowed(credential.allowedCidrs, clientAddress));
  return { within, leftOut: { addressNotAllowed: grants.length - within.length } };
}

/**
 * One range of the account's active grants in Client ID order (descending), `limit + 1` to know
 * whether more remain, then the grants' credentials in one lookup: the credential view is what every
 * read checks (a revocation this replica has seen on its change feed applies to it at once), so a
 * grant it no longer holds active is left out even before the portfolio's own view hears of it. A
 * page may therefore hold fewer items than `limit`; the cursor still moves on.
 */
async function grantPage(views: ViewStore, { account, now }: PortfolioReader, query: PortfolioQuery): Promise<GrantPage> {
  const listed = await views.list(portfolioGrantView, account.accountId, {
    limit: query.limit + 1,
    atLeast: ACTIVE_GRANTS,
    below: query.after === undefined ? undefined : activeGrantSortKey(query.after),
  });
  const page = listed.slice(0, query.limit);
  const more = listed.length > query.limit;
  const credentials = await views.getMany(
    credentialView,
    page.map((grant) => grant.clientId),
  );
  const grants = page.flatMap((grant) => {
    const credential = credentials.get(grant.clientId);
    const held = credential?.recipientAccountId === account.accountId && isActive(credential, now) && grantActive(grant, now);
    return held && credential ? [{ grant, credential }] : [];
  });
  const last = page.at(-1);
  return { grants, nextCursor: more && last ? cursorAfter(last.clientId) : null };
}
