import type { Express } from 'express';
import { createBaseApp, finishApp, methodNotAllowed, mountApiDocs, type Logger, type TokenVerifier } from '@rsd/platform';
import type { Clock, EventLog } from '@rsd/ports';
import type { ScoreIngestConfig } from './config';
import { scoreIngestOpenApi } from './openapi';
import { scoreRoutes } from './scores/score-routes';

export interface ScoreIngestAppDeps {
  config: ScoreIngestConfig;
  eventLog: EventLog;
  clock: Clock;
  log: Logger;
  verifyToken: TokenVerifier;
}

export function buildApp({ config, eventLog, clock, log, verifyToken }: ScoreIngestAppDeps): Express {
  const app = createBaseApp({ log });
  mountApiDocs(app, scoreIngestOpenApi());
  app
    .route('/healthz')
    .get((_req, res) => {
      res.json({ status: 'ok' });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  app.use('/v1', scoreRoutes({ eventLog, clock, log, verifyToken, bodyLimit: config.SCORE_INGEST_BODY_LIMIT }));
  return finishApp(app, log);
}
