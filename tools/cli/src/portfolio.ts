import type { PortfolioLeftOut } from '@resilience-score/client';
import type { Product } from './product';
import { UsageError } from './score-file';

/** The options `rsd portfolio …` reads, by their names on the command line. */
export interface PortfolioOptions {
  'client-id'?: string;
  limit?: string;
  cursor?: string;
  all?: boolean;
  overlap?: string;
  organizations?: string;
  none?: boolean;
}

export interface PortfolioContext {
  /** The product, with the recipient account's key (`rsa_…`, from RSD_API_KEY or --api-key) as its API key. */
  product: Product;
  secondsOf: (value: string) => number;
  note: (line: string) => void;
}

/** The most pages `--all` follows: 100 pages of 100 grants. */
const MOST_PAGES = 100;
const PAGE = 100;

/**
 * `rsd portfolio SUBCOMMAND` (decision 42), for a recipient holding an account key: what its account
 * holds and reads on the read API, and what it changes (its key, the grants it leaves, its answers to
 * the grants offered to it, whose offers it accepts as they are made) on the credentials service.
 * What to print on stdout, or undefined for nothing.
 */
export async function runPortfolioCommand(
  subcommand: string | undefined,
  options: PortfolioOptions,
  context: PortfolioContext,
): Promise<unknown> {
  const { product } = context;
  switch (subcommand) {
    case 'show':
      return product.portfolio().summary();
    case 'customers':
    case 'scores':
    case 'pillars':
      return options.all ? allItems(subcommand, context) : onePage(subcommand, options, context);
    case 'rotate-key': {
      const request = options.overlap === undefined ? {} : { overlapSeconds: context.secondsOf(options.overlap) };
      const rotated = await product.portfolio().rotateKey(request);
      context.note('rsd: the new account key is shown only this once; keep it now');
      if (rotated.enforcement === 'pending') {
        context.note('rsd: recorded, NOT yet in effect: the new key works once the event log has taken it');
      }
      return rotated;
    }
    case 'leave':
      return endGrant(options, context, 'released', (portfolio, clientId) => portfolio.release(clientId));
    case 'offers list':
      return options.all ? allItems('offers', context) : onePage('offers', options, context, product.origins.credentials);
    case 'offers accept': {
      const clientId = clientIdOf(options);
      const accepted = await product.portfolio().acceptOffer(clientId);
      context.note(
        accepted.enforcement === 'pending'
          ? `rsd: offer ${clientId} accepted, NOT yet in effect: the account key reads the grant once the event log has taken it`
          : `rsd: offer ${clientId} accepted; the account holds the grant from now on`,
      );
      return accepted;
    }
    case 'offers decline':
      return endGrant(options, context, 'declined', (portfolio, clientId) => portfolio.declineOffer(clientId));
    case 'auto-accept': {
      if (options.organizations !== undefined && options.none) throw new UsageError('--organizations and --none exclude each other');
      const portfolio = product.portfolio();
      if (options.none) return portfolio.setAutoAccept([]);
      if (options.organizations === undefined) return portfolio.autoAccept();
      return portfolio.setAutoAccept(
        options.organizations
          .split(',')
          .map((id) => id.trim())
          .filter(Boolean),
      );
    }
    default:
      throw new UsageError(
        `unknown portfolio command: ${subcommand ?? '(none)'}; one of show, customers, scores, pillars, rotate-key, leave, offers, auto-accept`,
      );
  }
}

function clientIdOf(options: PortfolioOptions): string {
  const clientId = options['client-id'];
  if (!clientId) throw new UsageError('--client-id is required');
  return clientId;
}

/** A release or a decline: the grant ends. The SDK answers nothing; the status it received says whether that is in effect yet. */
async function endGrant(
  options: PortfolioOptions,
  context: PortfolioContext,
  how: 'released' | 'declined',
  end: (portfolio: ReturnType<Product['portfolio']>, clientId: string) => Promise<void>,
): Promise<undefined> {
  const clientId = clientIdOf(options);
  const statuses: number[] = [];
  await end(context.product.portfolio({ onResponse: (response) => statuses.push(response.status) }), clientId);
  context.note(
    statuses.at(-1) === 202
      ? `rsd: grant ${clientId} ${how}, NOT yet in effect: the event log could not take it in time`
      : `rsd: grant ${clientId} ${how}; its organization sees it as ${how} by the recipient`,
  );
  return undefined;
}

/**
 * One page, from the cursor given: the SDK's iterators go through every page from the first, so this
 * one request is the CLI's own (sent as the SDK sends, its refusals the SDK's error classes).
 */
async function onePage(
  resource: string,
  options: PortfolioOptions,
  { product }: PortfolioContext,
  origin: string = product.origins.api,
): Promise<unknown> {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', options.limit);
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  const url = `${origin}/v1/portfolio/${resource}`;
  const answer = await product.sendJson({
    url: query.size > 0 ? `${url}?${query.toString()}` : url,
    headers: { 'x-api-key': product.apiKey() },
  });
  return answer.body;
}

/**
 * `--all`: every page, 100 items at a time, as one list; the items as the API gives them, and what the
 * pages left out added up (`leftOut`, as on one page; none for offers, which no address bounds).
 */
async function allItems(
  resource: 'customers' | 'scores' | 'pillars' | 'offers',
  { product }: PortfolioContext,
): Promise<{ items: unknown[]; leftOut?: PortfolioLeftOut }> {
  const portfolio = product.portfolio();
  const items: unknown[] = [];
  const listing = portfolio[resource]({ limit: PAGE });
  for await (const item of listing) {
    // The SDK adds what it verified with (the page's evidence) to each score or breakdown: not the API's item.
    const { evidence: _evidence, notModified: _notModified, ...fields } = item as { evidence?: unknown; notModified?: unknown };
    items.push(fields);
    if (items.length > PAGE * MOST_PAGES) throw new Error(`more than ${MOST_PAGES} pages: page through with --limit and --cursor instead`);
  }
  return resource === 'offers' ? { items } : { items, leftOut: { ...listing.leftOut } };
}
