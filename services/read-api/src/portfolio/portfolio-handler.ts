import { isIP } from 'node:net';
import type { Request, Response, Router } from 'express';
import { labelledRouter } from '@rsd/observability';
import { methodNotAllowed, requestIdOf, serviceUnavailable } from '@rsd/platform';
import { accountAuthenticator, portfolioQueryOf, type PortfolioQuery } from '@rsd/recipient-access';
import type { CustomerHandlerDeps } from '../customers/customer-handler';
import { representationSender } from '../customers/send-representation';
import { createResponseSigner } from '../signing/response-signer';
import { accessRecordIds } from '../access-log/record-on-finish';
import { customersPage, pillarsPage, portfolioOf, scoresPage, type PortfolioReader } from './portfolio-pages';

const METHODS = ['GET', 'HEAD'] as const;
const STALE_RETRY_AFTER_S = 5;

/**
 * Decision 42: `/v1/portfolio` and its pages, read with a recipient account's key. The same steps
 * as a customer resource: refuse while the views may be stale (decision 29), let the account in
 * (its key, then its limit), read the views in a bounded number of lookups, and send the page with
 * its ETag and signature (decisions 23–24). Each grant whose score or breakdown a page serves is in
 * that grant's access log, as a read by its own key would be (decision 21).
 */
export function portfolioRouter(deps: CustomerHandlerDeps): Router {
  const { views, staleness, clock, config } = deps;
  const authenticate = accountAuthenticator(deps);
  const signer = deps.responseSigner ?? createResponseSigner(deps.signingKeys, { reuseSeconds: config.RESPONSE_SIGNATURE_REUSE_S });
  const send = representationSender(signer, clock);
  const nextId = accessRecordIds();
  const router = labelledRouter();

  const reader = async (req: Request, res: Response, template: string): Promise<PortfolioReader> => {
    res.locals.metricsRoute = `/v1/portfolio${template}`;
    res.setHeader('Cache-Control', 'no-store');
    if (staleness?.isStale(clock.now())) {
      throw serviceUnavailable('This replica has lost touch with the event log, so its data may be out of date; retry shortly', {
        retryAfterS: STALE_RETRY_AFTER_S,
      });
    }
    const { account, clientAddress } = await authenticate(req, res);
    return { account, clientAddress, now: clock.now() };
  };

  /** One finish listener for the whole page: the status it went out with, for every grant it served. */
  const recordServed = (res: Response, resource: 'score' | 'pillars', clientIds: string[], clientAddress: string | undefined) => {
    const record = deps.recordAccess;
    if (!record || clientIds.length === 0) return;
    const address = clientAddress !== undefined && isIP(clientAddress) !== 0 ? clientAddress : null;
    res.on('finish', () => {
      const at = clock.now().toISOString();
      const requestId = requestIdOf(res) ?? 'none';
      for (const clientId of clientIds) {
        record({ id: nextId(), clientId, at, resource, status: res.statusCode, code: null, clientAddress: address, requestId });
      }
    });
  };

  const paged = <Page extends { nextCursor: string | null }>(req: Request, res: Response, query: PortfolioQuery, page: Page) => {
    if (page.nextCursor !== null) res.setHeader('Link', `<${nextPageUrl(req, query, page.nextCursor)}>; rel="next"`);
    send(req, res, page);
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

  router
    .route('/scores')
    .get(async (req, res) => {
      const who = await reader(req, res, '/scores');
      const query = portfolioQueryOf(req);
      const page = await scoresPage(views, who, query);
      recordServed(
        res,
        'score',
        page.items.map((item) => item.clientId),
        who.clientAddress,
      );
      paged(req, res, query, page);
    })
    .all(methodNotAllowed(METHODS));

  router
    .route('/pillars')
    .get(async (req, res) => {
      const who = await reader(req, res, '/pillars');
      const query = portfolioQueryOf(req);
      const page = await pillarsPage(views, who, query);
      recordServed(
        res,
        'pillars',
        page.items.map((item) => item.clientId),
        who.clientAddress,
      );
      paged(req, res, query, page);
    })
    .all(methodNotAllowed(METHODS));

  return router;
}

/** The same request with the next page's cursor: a reference relative to the request's own URL. */
function nextPageUrl(req: Request, query: PortfolioQuery, cursor: string): string {
  const parameters = new URLSearchParams({ limit: String(query.limit), cursor });
  return `${req.originalUrl.split('?')[0]}?${parameters.toString()}`;
}
