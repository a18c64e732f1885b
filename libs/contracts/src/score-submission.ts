import { z } from 'zod';
import { instantInputSchema, organizationIdSchema } from './ids';
import { datedScoreShape, pillarScoresSchema } from './resources';

export const MAX_SCORES_PER_BATCH = 1000;

/** One score as an upstream scoring engine posts it. */
export const scoreSubmissionSchema = z
  .strictObject({
    organizationId: organizationIdSchema,
    ...datedScoreShape,
    pillarScores: pillarScoresSchema,
    calculatedAt: instantInputSchema.optional().meta({ description: 'Defaults to the time the service received it' }),
  })
  .meta({ id: 'ScoreSubmission' });
export type ScoreSubmission = z.infer<typeof scoreSubmissionSchema>;

export const scoreBatchSchema = z
  .strictObject({ scores: z.array(scoreSubmissionSchema).min(1).max(MAX_SCORES_PER_BATCH) })
  .meta({ id: 'ScoreBatch' });

export const scoresAcceptedSchema = z.object({ accepted: z.int().min(1) }).meta({ id: 'ScoresAccepted' });
