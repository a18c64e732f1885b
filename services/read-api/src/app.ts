import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { createBaseApp, finishApp, methodNotAllowed, mountApiDocs, type Logger } from '@rsd/platform';
import type { Clock, RateLimitStoreFactory, ViewStore } from '@rsd/ports';
import { edgePolicy } from '@rsd/recipient-access';
import type { ReadApiConfig } from './config';
import { customerHandler } from './customers/customer-handler';
import type { SigningKeys } from './signing/signing-keys';
import type { ResponseSigner } from './signing/response-signer';
import type { FeedStaleness } from './views/feed-staleness';
import { readApiOpenApi } from './openapi';
import type { RecordAccess } from './access-log/record-on-finish';

export interface ReadApiDeps {
  config: ReadApiConfig;
  views: ViewStore;
  /** Absent: the views are in this process and never behind the log. */
  staleness?: FeedStaleness;
  /** Signs every 200 from a customer resource; all of them are published at /.well-known/jwks.json. */
  signingKeys: SigningKeys;
  /** Default: the active key's (customer-handler.ts). Only `npm run bench` gives another: its unsigned baseline. */
  responseSigner?: ResponseSigner;
  rateLimitStores: RateLimitStoreFactory;
  clock: Clock;
  log: Logger;
  operations?: Operations;
  /** Decision 21: the access recorder's intake; absent (ACCESS_LOG_ENABLED=false, or a test), nothing is recorded. */
  recordAccess?: RecordAccess;
}

/** The read API without a listening socket: main.ts and the tests decide where it listens. */
export function buildApp(deps: ReadApiDeps): Express {
  const { config, log } = deps;
  // /healthz, /readyz and /metrics come first, ahead of the edge policy: probes must not depend on the caller lists.
  const app = createBaseApp({ log, trustProxyHops: config.TRUST_PROXY_HOPS, operations: deps.operations });
  app.use(
    edgePolicy({
      denyCidrs: config.EDGE_DENY_CIDRS,
      allowCidrs: config.EDGE_ALLOW_CIDRS,
      blockedUserAgents: config.EDGE_BLOCKED_USER_AGENTS,
    }),
  );
  mountApiDocs(app, readApiOpenApi(config));
  const jwks = { keys: deps.signingKeys.published };
  // Public keys, the same for every caller: recipients may cache them a while, and must during a key change.
  app
    .route('/.well-known/jwks.json')
    .get((_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=300');
      res.json(jwks);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  const rejections = deps.operations?.metrics.rateLimitRejections;
  app.use('/v1/customers', customerHandler({ ...deps, onRateLimited: (limiter) => rejections?.inc({ limiter }) }));
  return finishApp(app, log);
}
