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
 * holds and reads on the read API, and what it changes (its key, the grants it leaves) on the
 * credentials service. What to print on stdout, or undefined for nothing.
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
    case 'leave': {
      const clientId = options['client-id'];
      if (!clientId) throw new UsageError('--client-id is required');
      // The SDK's release answers nothing: the status it received says whether the release is in effect yet.
      const statuses: number[] = [];
      await product.portfolio({ onResponse: (response) => statuses.push(response.status) }).release(clientId);
      context.note(
        statuses.at(-1) === 202
          ? `rsd: grant ${clientId} released, NOT yet in effect: the event log could not take it in time`
          : `rsd: grant ${clientId} released; its organization sees it as released by the recipient`,
      );
      return undefined;
    }
    default:
      throw new UsageError(
        `unknown portfolio command: ${subcommand ?? '(none)'}; one of show, customers, scores, pillars, rotate-key, leave`,
      );
  }
}

/**
 * One page, from the cursor given: the SDK's iterators go through every page from the first, so this
 * one request is the CLI's own (sent as the SDK sends, its refusals the SDK's error classes).
 */
async function onePage(resource: string, options: PortfolioOptions, { product }: PortfolioContext): Promise<unknown> {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', options.limit);
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  const url = `${product.origins.api}/v1/portfolio/${resource}`;
  const answer = await product.sendJson({
    url: query.size > 0 ? `${url}?${query.toString()}` : url,
    headers: { 'x-api-key': product.apiKey() },
  });
  return answer.body;
}

/**
 * `--all`: every page, 100 items at a time, as one list; the items as the API gives them, and what the
 * pages left out added up (`leftOut`, as on one page).
 */
async function allItems(
  resource: 'customers' | 'scores' | 'pillars',
  { product }: PortfolioContext,
): Promise<{ items: unknown[]; leftOut: PortfolioLeftOut }> {
  const portfolio = product.portfolio();
  const items: unknown[] = [];
  const listing = portfolio[resource]({ limit: PAGE });
  for await (const item of listing) {
    // The SDK adds what it verified with (the page's evidence) to each score or breakdown: not the API's item.
    const { evidence: _evidence, notModified: _notModified, ...fields } = item as { evidence?: unknown; notModified?: unknown };
    items.push(fields);
    if (items.length > PAGE * MOST_PAGES) throw new Error(`more than ${MOST_PAGES} pages: page through with --limit and --cursor instead`);
  }
  return { items, leftOut: { ...listing.leftOut } };
}
