import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { finishApp, methodNotAllowed, mountApiDocs } from '@rsd/platform';
import { createRecipientApp } from '@rsd/recipient-access';
import { customerHandler } from './customers/customer-handler';
import { readApiOpenApi } from '@rsd/api-documents';
import { portfolioRouter } from './portfolio/portfolio-handler';
import { readPipeline, type ReadPipelineDeps } from './pipeline/read-pipeline';

/** What the read pipeline needs (its rate-limit counter is the service's metric), and the service's probes and metrics. */
export interface ReadApiDeps extends Omit<ReadPipelineDeps, 'onRateLimited'> {
  operations?: Operations;
}

/** The read API without a listening socket: main.ts and the tests decide where it listens. */
export function buildApp(deps: ReadApiDeps): Express {
  const { config, log } = deps;
  const app = createRecipientApp({ config, log, operations: deps.operations });
  const rejections = deps.operations?.metrics.rateLimitRejections;
  // Every read comes here: first after the edge policy, so no other route is tried on the way.
  const onRateLimited = (limiter: string) => rejections?.inc({ limiter });
  // One pipeline for every read: the customer resources, certificates and portfolio pages alike.
  const pipeline = readPipeline({ ...deps, onRateLimited });
  app.use(customerHandler(pipeline));
  app.use('/v1/portfolio', portfolioRouter(pipeline));
  const jwks = { keys: deps.signingKeys.published };
  // Public keys, the same for every caller: recipients may cache them a while, and must during a key change.
  app
    .route('/.well-known/jwks.json')
    .get((_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=300');
      res.json(jwks);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  mountApiDocs(app, readApiOpenApi(config));
  return finishApp(app, log);
}
