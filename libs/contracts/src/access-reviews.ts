import { z } from 'zod';
import { auditActorSchema } from './audit';
import { recipientTypeSchema, scopeSchema } from './authorization';
import { clientIdSchema, instantInputSchema, organizationIdSchema, utcInstantSchema } from './ids';
import { newestFirstPageSchema } from './pages';

/*
 * Decision 54's access reviews (evidence for SOC 2 CC6.2-6.3): every active grant of an organization
 * as an item a reviewer keeps or revokes by a due time; what is undecided then is kept or revoked as
 * the review says. Its report is signed with the response-signing keys, as certificates are.
 */

export const ACCESS_REVIEW_DECISIONS = ['keep', 'revoke'] as const;
export const accessReviewDecisionSchema = z.enum(ACCESS_REVIEW_DECISIONS).meta({ id: 'AccessReviewDecision' });
export type AccessReviewDecision = z.infer<typeof accessReviewDecisionSchema>;

export const accessReviewStatusSchema = z.enum(['open', 'completed']).meta({ id: 'AccessReviewStatus' });
export type AccessReviewStatus = z.infer<typeof accessReviewStatusSchema>;

/** `arv_` and 24 letters or digits. */
export const ACCESS_REVIEW_ID_PATTERN = /^arv_[A-Za-z0-9]{24}$/;
export const accessReviewIdSchema = z
  .string()
  .regex(ACCESS_REVIEW_ID_PATTERN)
  .meta({ id: 'AccessReviewId', example: 'arv_4f9Qk2LmX8pR3tV7wY1zA6bC' });

/** A reviewer's note on a decision: free text, kept with the review and in its report. */
export const ACCESS_REVIEW_NOTE_MAX = 1000;

/** The list's page size (`limit`), as the other lists. */
export const ACCESS_REVIEW_LIMIT = { min: 1, max: 500, default: 100 } as const;

/** What a review's JWS says in its protected header as `typ`. */
export const ACCESS_REVIEW_REPORT_JWS_TYPE = 'rsd-access-review-report+json';

/** POST /v1/organizations/{organizationId}/access-reviews */
export const createAccessReviewRequestSchema = z
  .strictObject({
    dueAt: instantInputSchema.meta({ description: 'When undecided items are settled: any future instant with an offset' }),
    onOverdue: accessReviewDecisionSchema.meta({ description: 'What becomes of an item still undecided at dueAt' }),
  })
  .meta({ id: 'CreateAccessReviewRequest' });

/** PUT /v1/organizations/{organizationId}/access-reviews/{reviewId}/items/{clientId} */
export const accessReviewItemDecisionRequestSchema = z
  .strictObject({
    decision: accessReviewDecisionSchema,
    note: z.string().max(ACCESS_REVIEW_NOTE_MAX).nullable().optional().meta({ description: "The reviewer's reason; optional" }),
  })
  .meta({ id: 'AccessReviewItemDecisionRequest' });

export const accessReviewProgressSchema = z
  .object({
    total: z.int().min(0),
    decided: z.int().min(0),
    kept: z.int().min(0),
    revoked: z.int().min(0),
    pending: z.int().min(0),
  })
  .meta({ id: 'AccessReviewProgress' });
export type AccessReviewProgress = z.infer<typeof accessReviewProgressSchema>;

/** One grant under review, as it stood when the review began, and what was decided of it. */
export const accessReviewItemSchema = z
  .object({
    clientId: clientIdSchema,
    recipientType: recipientTypeSchema,
    recipientName: z.string().nullable(),
    scopes: z.array(scopeSchema),
    decision: accessReviewDecisionSchema.nullable().meta({ description: 'null while undecided' }),
    note: z.string().nullable(),
    decidedAt: utcInstantSchema.nullable(),
    decidedBy: auditActorSchema.nullable().meta({ description: 'Who decided; the system for an item settled at dueAt' }),
    overdue: z.boolean().meta({ description: 'True when the item was settled at dueAt by onOverdue, not by a reviewer' }),
  })
  .meta({ id: 'AccessReviewItem' });
export type AccessReviewItem = z.infer<typeof accessReviewItemSchema>;

export const accessReviewSummarySchema = z
  .object({
    reviewId: accessReviewIdSchema,
    organizationId: organizationIdSchema,
    createdAt: utcInstantSchema,
    createdBy: auditActorSchema,
    dueAt: utcInstantSchema,
    onOverdue: accessReviewDecisionSchema,
    status: accessReviewStatusSchema,
    completedAt: utcInstantSchema.nullable(),
    progress: accessReviewProgressSchema,
  })
  .meta({ id: 'AccessReviewSummary' });
export type AccessReviewSummary = z.infer<typeof accessReviewSummarySchema>;

export const accessReviewSchema = accessReviewSummarySchema
  .extend({ items: z.array(accessReviewItemSchema).meta({ description: 'In Client ID order' }) })
  .meta({ id: 'AccessReview' });
export type AccessReview = z.infer<typeof accessReviewSchema>;

export const accessReviewPageSchema = newestFirstPageSchema(accessReviewSummarySchema, 'AccessReviewPage');
export type AccessReviewPage = z.infer<typeof accessReviewPageSchema>;

/** One line of the report: the item, the grant's last use and its reads within the review's period. */
export const accessReviewReportLineSchema = accessReviewItemSchema
  .extend({
    lastUsedAt: utcInstantSchema.nullable().meta({ description: "The grant's last successful read when the report was made; null: never" }),
    readsInPeriod: z
      .int()
      .min(0)
      .meta({ description: 'Successful reads from the review’s start to its end (or to the report, while open)' }),
  })
  .meta({ id: 'AccessReviewReportLine' });
export type AccessReviewReportLine = z.infer<typeof accessReviewReportLineSchema>;

/** The report: exactly the payload of its JWS (a verifier reads it from the JWS it checked). */
export const accessReviewReportSchema = accessReviewSummarySchema
  .extend({
    period: z
      .object({ from: utcInstantSchema, to: utcInstantSchema })
      .meta({ description: 'The reads counted: from the review’s start to its end, or to issuedAt' }),
    issuedAt: utcInstantSchema,
    items: z.array(accessReviewReportLineSchema),
  })
  .meta({ id: 'AccessReviewReport' });
export type AccessReviewReport = z.infer<typeof accessReviewReportSchema>;

export const signedAccessReviewReportSchema = z
  .object({
    report: accessReviewReportSchema,
    jws: z.string().meta({
      description:
        'The report as a compact JWS (EdDSA, `kid` of a key at the read API’s /.well-known/jwks.json): its payload is `report`, byte for byte',
    }),
  })
  .meta({ id: 'SignedAccessReviewReport' });
export type SignedAccessReviewReport = z.infer<typeof signedAccessReviewReportSchema>;
