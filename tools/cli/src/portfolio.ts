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

interface Page {
  items: unknown[];
  nextCursor: string | null;
}

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
  const portfolioUrl = `${product.origins.api}/v1/portfolio`;
  const headers = () => ({ 'x-api-key': product.apiKey() });
  switch (subcommand) {
    case 'show':
      return (await product.sendJson({ url: portfolioUrl, headers: headers() })).body;
    case 'customers':
    case 'scores':
    case 'pillars':
      return options.all ? allPages(`${portfolioUrl}/${subcommand}`, context) : onePage(`${portfolioUrl}/${subcommand}`, options, context);
    case 'rotate-key': {
      const body = options.overlap === undefined ? {} : { overlapSeconds: context.secondsOf(options.overlap) };
      const answer = await product.sendJson({
        method: 'POST',
        url: `${product.origins.credentials}/v1/portfolio/keys/rotate`,
        headers: headers(),
        body,
      });
      context.note('rsd: the new account key is shown only this once; keep it now');
      if (answer.status === 202) context.note('rsd: recorded, NOT yet in effect: the new key works once the event log has taken it');
      return answer.body;
    }
    case 'leave': {
      const clientId = options['client-id'];
      if (!clientId) throw new UsageError('--client-id is required');
      const url = `${product.origins.credentials}/v1/portfolio/customers/${encodeURIComponent(clientId)}`;
      const answer = await product.sendJson({ method: 'DELETE', url, headers: headers() });
      context.note(
        answer.status === 202
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

async function onePage(url: string, options: PortfolioOptions, context: PortfolioContext): Promise<unknown> {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', options.limit);
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  return (
    await context.product.sendJson({
      url: query.size > 0 ? `${url}?${query.toString()}` : url,
      headers: { 'x-api-key': context.product.apiKey() },
    })
  ).body;
}

/** `--all`: every page, 100 grants at a time, as one list. */
async function allPages(url: string, context: PortfolioContext): Promise<{ items: unknown[] }> {
  const items: unknown[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < MOST_PAGES; pages += 1) {
    const query: URLSearchParams = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
    const page = (await context.product.sendJson({ url: `${url}?${query.toString()}`, headers: { 'x-api-key': context.product.apiKey() } }))
      .body as Page;
    items.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === null) return { items };
  }
  throw new Error(`more than ${MOST_PAGES} pages: page through with --limit and --cursor instead`);
}
