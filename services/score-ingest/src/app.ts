import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { createBaseApp, finishApp, mountApiDocs, type Logger, type TokenVerifier } from '@rsd/platform';
import type { Clock, EventLog } from '@rsd/ports';
import type { ScoreIngestConfig } from './config';
import { scoreIngestOpenApi } from '@rsd/api-documents';
import { scoreRoutes } from './scores/score-routes';

export interface ScoreIngestAppDeps {
  config: ScoreIngestConfig;
  eventLog: EventLog;
  clock: Clock;
  log: Logger;
  verifyToken: TokenVerifier;
  operations?: Operations;
}

export function buildApp({ config, eventLog, clock, log, verifyToken, operations }: ScoreIngestAppDeps): Express {
  const app = createBaseApp({ log, operations });
  mountApiDocs(app, scoreIngestOpenApi());
  app.use('/v1', scoreRoutes({ eventLog, clock, log, verifyToken, bodyLimit: config.SCORE_INGEST_BODY_LIMIT }));
  return finishApp(app, log);
}
