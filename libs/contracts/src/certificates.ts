import { z } from 'zod';
import { recipientTypeSchema } from './authorization';
import { clientIdSchema, isoDateSchema, organizationIdSchema, utcInstantSchema } from './ids';
import { PORTFOLIO_LIMIT, portfolioLeftOutSchema } from './portfolio';
import { gradeSchema, pillarScoresSchema, scoreValueSchema } from './resources';
import { signedDocumentSchema } from './signed-jws';

/** Decision 55: what a certificate's JWS says in its protected header besides `alg` and `kid`. */
export const CERTIFICATE_JWS_TYPE = 'rsd-certificate+json';

/** A certificate's id: `crt_` and the base64url of the first 16 bytes of the SHA-256 of what it certifies (its other fields). */
export const certificateIdSchema = z.string().regex(/^crt_[A-Za-z0-9_-]{22}$/);

/**
 * Decision 55: the score as it stood on a date, for one grant. Exactly the payload of its JWS: a
 * verifier reads the certificate from the JWS it checked, never from beside it.
 */
export const certificateSchema = z
  .strictObject({
    certificateId: certificateIdSchema,
    organization: z.strictObject({ organizationId: organizationIdSchema }).meta({ description: 'Whose score it is' }),
    recipient: z
      .strictObject({
        clientId: clientIdSchema.meta({ description: 'The grant the certificate was issued to' }),
        type: recipientTypeSchema
          .nullable()
          .meta({ description: 'null only for a grant whose read views were built before certificates, until they are rebuilt' }),
        name: z.string().nullable().meta({ description: 'Who the organization named as the recipient; null: not named' }),
      })
      .meta({ description: 'To whom it was issued, as the organization granted it' }),
    score: scoreValueSchema,
    grade: gradeSchema,
    pillarScores: pillarScoresSchema.optional().meta({ description: 'Only when the grant also holds pillar_breakdown' }),
    scoreDate: isoDateSchema.meta({ description: 'The date of the score that was the latest on asOf' }),
    calculatedAt: utcInstantSchema.meta({ description: 'When that score was calculated' }),
    asOf: isoDateSchema.meta({ description: 'The date the certificate speaks for (UTC)' }),
    issuedAt: utcInstantSchema.meta({ description: 'When this certificate was issued and signed' }),
    eventIds: z.array(z.string()).meta({
      description:
        "The ids of the events it rests on: the score's calculation, then the grant's creation (either absent for views built before certificates)",
    }),
  })
  .meta({ id: 'Certificate' });
export type Certificate = z.infer<typeof certificateSchema>;

/** GET /v1/customers/{clientId}/certificate */
export const certificateResourceSchema = signedDocumentSchema('certificate', certificateSchema, 'SignedCertificate');
export type CertificateResource = z.infer<typeof certificateResourceSchema>;

/** GET /v1/portfolio/certificates: a page of the account's grants, each with its certificate on asOf. */
export const portfolioCertificatesPageSchema = z
  .object({
    items: z.array(certificateResourceSchema.extend({ clientId: clientIdSchema })).meta({
      description: `One for every grant of the page (${PORTFOLIO_LIMIT.min}–${PORTFOLIO_LIMIT.max} grants) that holds qr_score and had a score on asOf`,
    }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
    leftOut: portfolioLeftOutSchema,
  })
  .meta({ id: 'PortfolioCertificatesPage' });
export type PortfolioCertificatesPage = z.infer<typeof portfolioCertificatesPageSchema>;
