import { callJson, callJsonAnswer } from './http-client';
import { UsageError } from './score-file';

/** The options `rsd portfolio …` reads, as parseArgs gives them. */
export interface PortfolioOptions {
  'client-id'?: string;
  limit?: string;
  cursor?: string;
  all?: boolean;
  overlap?: string;
}

export interface PortfolioContext {
  apiUrl: string;
  credentialsUrl: string;
  /** The recipient account's key (`rsa_…`), from RSD_API_KEY or --api-key. */
  apiKeyHeader: () => Record<string, string>;
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
  const portfolioUrl = `${context.apiUrl}/v1/portfolio`;
  switch (subcommand) {
    case 'show':
      return callJson(portfolioUrl, { headers: context.apiKeyHeader() });
    case 'customers':
    case 'scores':
    case 'pillars':
      return options.all ? allPages(`${portfolioUrl}/${subcommand}`, context) : onePage(`${portfolioUrl}/${subcommand}`, options, context);
    case 'rotate-key': {
      const body = options.overlap === undefined ? {} : { overlapSeconds: context.secondsOf(options.overlap) };
      const answer = await callJsonAnswer(`${context.credentialsUrl}/v1/portfolio/keys/rotate`, {
        method: 'POST',
        headers: context.apiKeyHeader(),
        body,
      });
      context.note('rsd: the new account key is shown only this once; keep it now');
      if (answer.status === 202) context.note('rsd: recorded, NOT yet in effect: the new key works once the event log has taken it');
      return answer.body;
    }
    case 'leave': {
      const clientId = options['client-id'];
      if (!clientId) throw new UsageError('--client-id is required');
      const url = `${context.credentialsUrl}/v1/portfolio/customers/${encodeURIComponent(clientId)}`;
      const answer = await callJsonAnswer(url, { method: 'DELETE', headers: context.apiKeyHeader() });
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

function onePage(url: string, options: PortfolioOptions, context: PortfolioContext): Promise<unknown> {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', options.limit);
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  return callJson(query.size > 0 ? `${url}?${query.toString()}` : url, { headers: context.apiKeyHeader() });
}

/** `--all`: every page, 100 grants at a time, as one list. */
async function allPages(url: string, context: PortfolioContext): Promise<{ items: unknown[] }> {
  const items: unknown[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < MOST_PAGES; pages += 1) {
    const query: URLSearchParams = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
    const page = (await callJson(`${url}?${query.toString()}`, { headers: context.apiKeyHeader() })) as Page;
    items.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === null) return { items };
  }
  throw new Error(`more than ${MOST_PAGES} pages: page through with --limit and --cursor instead`);
}
