import type { Request, Response, Router } from 'express';
import { labelledRouter } from '@rsd/observability';
import { methodNotAllowed } from '@rsd/platform';
import { portfolioQueryOf, type PortfolioQuery } from '@rsd/recipient-access';
import type { ReadPipeline } from '../pipeline/read-pipeline';
import { certificatesPage } from '../certificates/serve-certificate';
import { customersPage, pillarsPage, portfolioOf, scoresPage, type PortfolioReader } from './portfolio-pages';

const METHODS = ['GET', 'HEAD'] as const;

interface PageOptions {
  keep?: readonly string[];
  once?: boolean;
}

/**
 * Decision 42: `/v1/portfolio` and its pages, read with a recipient account's key, through the read
 * pipeline a customer resource takes (read-pipeline.ts): refuse while the views may be stale, let
 * the account in (its key, then its limit), read the views in a bounded number of lookups, and send
 * the page with its ETag and signature. Each grant whose data a page serves is in that grant's
 * access log, as a read by its own key would be (decision 21).
 */
export function portfolioRouter(pipeline: ReadPipeline): Router {
  const { views, send } = pipeline;
  const router = labelledRouter();

  const reader = (req: Request, res: Response, template: string): Promise<PortfolioReader> => {
    pipeline.label(res, `/v1/portfolio${template}`);
    return pipeline.account(req, res);
  };

  /**
   * `keep`: the page's own parameters besides the paging ones, carried into its next page's link;
   * `once`: the page is issued for this request alone (certificates), so its signature is not kept for reuse.
   */
  const paged = <Page extends { nextCursor: string | null }>(
    req: Request,
    res: Response,
    query: PortfolioQuery,
    page: Page,
    { keep = [], once = false }: PageOptions = {},
  ) => {
    if (page.nextCursor !== null) res.setHeader('Link', `<${nextPageUrl(req, query, page.nextCursor, keep)}>; rel="next"`);
    send(req, res, page, undefined, { once });
  };

  /** A page of one kind of item per grant: the grants it served are recorded, then it is sent. */
  const grantPage = <Page extends { nextCursor: string | null; items: readonly { clientId: string }[] }>(
    template: string,
    access: 'score' | 'pillars' | 'certificate',
    pageOf: (req: Request, res: Response, who: PortfolioReader, query: PortfolioQuery) => Promise<Page>,
    options: PageOptions = {},
  ) => {
    router
      .route(template)
      .get(async (req, res) => {
        const who = await reader(req, res, template);
        const query = portfolioQueryOf(req);
        const page = await pageOf(req, res, who, query);
        pipeline.recordServed(
          res,
          access,
          page.items.map((item) => item.clientId),
          who,
        );
        paged(req, res, query, page, options);
      })
      .all(methodNotAllowed(METHODS));
  };

  router
    .route('/')
    .get(async (req, res) => {
      const who = await reader(req, res, '');
      send(req, res, await portfolioOf(views, who));
    })
    .all(methodNotAllowed(METHODS));

  router
    .route('/customers')
    .get(async (req, res) => {
      const who = await reader(req, res, '/customers');
      const query = portfolioQueryOf(req);
      paged(req, res, query, await customersPage(views, who, query));
    })
    .all(methodNotAllowed(METHODS));

  grantPage('/scores', 'score', (_req, _res, who, query) => scoresPage(views, who, query));
  grantPage('/pillars', 'pillars', (_req, _res, who, query) => pillarsPage(views, who, query));
  // Decision 55: a certificate for every grant of the page that holds qr_score and has a score on asOf.
  grantPage('/certificates', 'certificate', (req, res, who, query) => certificatesPage(pipeline, req, res, who, query), {
    keep: ['asOf'],
    once: true,
  });

  return router;
}

/** The same request with the next page's cursor: a reference relative to the request's own URL. */
function nextPageUrl(req: Request, query: PortfolioQuery, cursor: string, keep: readonly string[]): string {
  const parameters = new URLSearchParams({ limit: String(query.limit), cursor });
  for (const name of keep) {
    const value = req.query[name];
    if (typeof value === 'string') parameters.set(name, value);
  }
  return `${req.originalUrl.split('?')[0]}?${parameters.toString()}`;
}
