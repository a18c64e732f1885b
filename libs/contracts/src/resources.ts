import { z } from 'zod';
import { isoDateSchema, organizationIdSchema, utcInstantSchema } from './ids';

export const GRADES = ['Sustain', 'Optimize', 'Strengthen', 'Improve', 'Prioritize'] as const;
export const gradeSchema = z.enum(GRADES).meta({ id: 'Grade' });
export type Grade = z.infer<typeof gradeSchema>;

export const scoreValueSchema = z.int().min(0).max(100);

export const pillarScoresSchema = z
  .strictObject({
    structuralIntegrity: scoreValueSchema,
    failureResistance: scoreValueSchema,
    deviceHealth: scoreValueSchema,
    recoveryCapability: scoreValueSchema,
  })
  .meta({ id: 'PillarScores' });
export type PillarScores = z.infer<typeof pillarScoresSchema>;

/** GET /v1/customers/{clientId}/score */
export const scoreResourceSchema = z
  .object({
    clientId: z.string().meta({ description: 'The Client ID the score was retrieved for' }),
    scoreDate: isoDateSchema,
    score: scoreValueSchema.meta({ description: 'Composite resilience score, 0 to 100' }),
    grade: gradeSchema,
  })
  .meta({ id: 'Score' });
export type ScoreResource = z.infer<typeof scoreResourceSchema>;

/** GET /v1/customers/{clientId}/pillars: no composite field, by specification. */
export const pillarBreakdownResourceSchema = z
  .object({
    clientId: z.string().meta({ description: 'The Client ID the breakdown was retrieved for' }),
    scoreDate: isoDateSchema,
    pillarScores: pillarScoresSchema,
  })
  .meta({ id: 'PillarBreakdown' });
export type PillarBreakdownResource = z.infer<typeof pillarBreakdownResourceSchema>;

/** GET /v1/customers/{clientId}/score/history (extension, scope `score_trend`). */
export const scoreHistoryResourceSchema = z
  .object({
    clientId: z.string(),
    scores: z.array(z.object({ scoreDate: isoDateSchema, score: scoreValueSchema, grade: gradeSchema })),
  })
  .meta({ id: 'ScoreHistory' });
export type ScoreHistoryResource = z.infer<typeof scoreHistoryResourceSchema>;

/** One calculated score as the upstream engine sent it and as the read model keeps it. */
export const calculatedScoreSchema = z.strictObject({
  organizationId: organizationIdSchema,
  scoreDate: isoDateSchema,
  score: scoreValueSchema,
  grade: gradeSchema,
  pillarScores: pillarScoresSchema,
  calculatedAt: utcInstantSchema,
});
export type CalculatedScore = z.infer<typeof calculatedScoreSchema>;
