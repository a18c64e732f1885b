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

/** The fields of one day's score wherever it travels (submitted, stored, in a history, in a webhook). */
export const datedScoreShape = { scoreDate: isoDateSchema, score: scoreValueSchema, grade: gradeSchema };

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

const scoreDeltaSchema = z.int().min(-100).max(100);

/** Why a snapshot differs from the next older one (decision 25); pillar fields only with the pillar_breakdown scope. */
export const scoreChangeSchema = z
  .object({
    score: scoreDeltaSchema.meta({ description: "This score minus the next older snapshot's" }),
    grade: z.object({ from: gradeSchema, to: gradeSchema }).nullable().meta({ description: 'null when the grade did not change' }),
    pillars: z
      .object({
        structuralIntegrity: scoreDeltaSchema,
        failureResistance: scoreDeltaSchema,
        deviceHealth: scoreDeltaSchema,
        recoveryCapability: scoreDeltaSchema,
      })
      .optional()
      .meta({ description: 'Per-pillar deltas; only when the credential also holds pillar_breakdown' }),
    driver: z.enum(['structuralIntegrity', 'failureResistance', 'deviceHealth', 'recoveryCapability']).nullable().optional().meta({
      description:
        'The pillar with the largest absolute change (the first in this order on a tie), null when none changed; only with pillar_breakdown',
    }),
  })
  .meta({ id: 'ScoreChange' });

export const historyItemSchema = z
  .object({
    ...datedScoreShape,
    pillarScores: pillarScoresSchema.optional().meta({ description: 'Only when the credential also holds pillar_breakdown' }),
    change: scoreChangeSchema.nullable().meta({ description: 'null for the oldest snapshot there is' }),
  })
  .meta({ id: 'HistoryItem' });
export type HistoryItemResource = z.infer<typeof historyItemSchema>;

/** How many dates one page of a score history holds (decision 25). */
export const HISTORY_LIMIT = { min: 1, max: 366, default: 30 } as const;

/** GET /v1/customers/{clientId}/score/history (extension, scope `score_trend`; decision 25). */
export const scoreHistoryResourceSchema = z
  .object({
    clientId: z.string(),
    scores: z.array(historyItemSchema).meta({ description: 'Newest first' }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null when no more remain' }),
  })
  .meta({ id: 'ScoreHistory' });
export type ScoreHistoryResource = z.infer<typeof scoreHistoryResourceSchema>;

/** One calculated score as the upstream engine sent it and as the read model keeps it. */
export const calculatedScoreSchema = z.strictObject({
  organizationId: organizationIdSchema,
  ...datedScoreShape,
  pillarScores: pillarScoresSchema,
  calculatedAt: utcInstantSchema,
});
export type CalculatedScore = z.infer<typeof calculatedScoreSchema>;
