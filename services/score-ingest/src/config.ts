import { z } from 'zod';
import { callerAuthConfigSchema, env } from '@rsd/platform';

const serviceConfigSchema = z.object({
  SCORE_INGEST_PORT: env.port(8082),
  SCORE_INGEST_HOST: env.string('0.0.0.0'),
  SCORE_INGEST_BODY_LIMIT: env.string('2mb').pipe(z.string().regex(/^\d+(\.\d+)?(b|kb|mb)$/i, 'must be a size such as 512kb or 2mb')),
  LOG_LEVEL: env.logLevel(),
});

/** Intersection, not extension: both halves are checked, so every bad variable is reported at once. */
export const scoreIngestConfigSchema = serviceConfigSchema.and(callerAuthConfigSchema);
export type ScoreIngestConfig = z.infer<typeof scoreIngestConfigSchema>;
