import { z } from 'zod';
import { clientIdSchema, instantInputSchema, isoDateSchema, organizationIdSchema, utcInstantSchema } from './ids';

export const RECIPIENT_TYPES = ['insurance_provider', 'auditor', 'regulatory_body', 'partner'] as const;
export const recipientTypeSchema = z.enum(RECIPIENT_TYPES).meta({ id: 'RecipientType' });
export type RecipientType = z.infer<typeof recipientTypeSchema>;

export const SCOPES = ['qr_score', 'score_trend', 'pillar_breakdown'] as const;
export const scopeSchema = z.enum(SCOPES).meta({ id: 'Scope' });
export type Scope = z.infer<typeof scopeSchema>;

export const MAX_ALLOWED_CIDRS = 32;

export const AUTHORIZATION_STATUSES = ['active', 'revoked', 'expired'] as const;
export const authorizationStatusSchema = z.enum(AUTHORIZATION_STATUSES).meta({ id: 'AuthorizationStatus' });
export type AuthorizationStatus = z.infer<typeof authorizationStatusSchema>;

/** POST /v1/organizations/{organizationId}/authorizations */
export const createAuthorizationRequestSchema = z
  .strictObject({
    recipientType: recipientTypeSchema,
    recipientName: z
      .string()
      .trim()
      .min(1)
      .max(200)
      // A name is shown in lists, tables and logs: no control characters (a NUL byte, a newline, an escape).
      // The pattern also goes into the OpenAPI document, which is why it is a plain range and not \p{Cc}.
      // eslint-disable-next-line no-control-regex -- naming the control characters is what this pattern is for
      .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters')
      .optional(),
    scopes: z
      .array(scopeSchema)
      .min(1)
      .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope'),
    expiresAt: z.union([isoDateSchema, instantInputSchema]).optional().meta({
      description: 'YYYY-MM-DD (valid through the end of that UTC day) or an ISO date-time with offset; must be in the future',
    }),
    allowedCidrs: z
      .array(z.string().max(64))
      .min(1)
      .max(MAX_ALLOWED_CIDRS)
      .optional()
      .meta({
        description: `Up to ${MAX_ALLOWED_CIDRS} IPv4/IPv6 addresses or CIDR ranges; reads from any other client address are refused with 403 ADDRESS_NOT_ALLOWED`,
      }),
  })
  .meta({ id: 'CreateAuthorizationRequest' });

/** POST /v1/organizations/{organizationId}/authorizations/{clientId}/rotate (decision 19); the body is optional. */
export const MAX_OVERLAP_SECONDS = 604_800;
export const DEFAULT_OVERLAP_SECONDS = 86_400;
export const rotateAuthorizationRequestSchema = z
  .strictObject({
    overlapSeconds: z
      .int()
      .min(0)
      .max(MAX_OVERLAP_SECONDS)
      .optional()
      .meta({
        description: `How long the previous key keeps working (default ${DEFAULT_OVERLAP_SECONDS}); never past the authorization's expiry`,
      }),
  })
  .meta({ id: 'RotateAuthorizationRequest' });
export type RotateAuthorizationRequest = z.infer<typeof rotateAuthorizationRequestSchema>;
export type CreateAuthorizationRequest = z.infer<typeof createAuthorizationRequestSchema>;

/** Decision 20: successful reads (200 and 304) of the authorization's credential; may lag by up to 60 s. */
export const authorizationUsageSchema = z
  .object({
    last24h: z.int().min(0).meta({ description: 'Successful reads in the last 24 hours' }),
    last30d: z.int().min(0).meta({ description: 'Successful reads in the last 30 days' }),
  })
  .meta({ id: 'AuthorizationUsage' });
export type AuthorizationUsage = z.infer<typeof authorizationUsageSchema>;

/** What list / get / revoke return. Never carries the API key. */
export const authorizationSchema = z
  .object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    recipientType: recipientTypeSchema,
    recipientName: z.string().nullable(),
    scopes: z.array(scopeSchema),
    expiresAt: utcInstantSchema.nullable().meta({ description: 'First instant at which the credential no longer works' }),
    status: authorizationStatusSchema,
    createdAt: utcInstantSchema,
    revokedAt: utcInstantSchema.nullable(),
    allowedCidrs: z.array(z.string()).nullable().meta({ description: 'The client addresses reads are allowed from; null: any' }),
    lastUsedAt: utcInstantSchema
      .nullable()
      .meta({ description: 'The last successful read; null when there has been none. May lag by up to 60 s' }),
    usage: authorizationUsageSchema,
  })
  .meta({ id: 'Authorization' });
export type Authorization = z.infer<typeof authorizationSchema>;

/** The 201 of a create: the only response that ever contains `apiKey`. */
export const createdAuthorizationSchema = authorizationSchema
  .extend({ apiKey: z.string().meta({ description: 'Shown exactly once; store it now' }) })
  .meta({ id: 'CreatedAuthorization' });
export type CreatedAuthorization = z.infer<typeof createdAuthorizationSchema>;

/** The 200 of a rotation: the new key, shown only here, and until when the previous one still works. */
export const rotatedAuthorizationSchema = authorizationSchema
  .extend({
    apiKey: z.string().meta({ description: 'The new key; shown exactly once' }),
    previousKeyExpiresAt: utcInstantSchema
      .nullable()
      .meta({ description: 'Until then the previous key works too; null when the overlap is 0' }),
  })
  .meta({ id: 'RotatedAuthorization' });
export type RotatedAuthorization = z.infer<typeof rotatedAuthorizationSchema>;

export const authorizationListSchema = z.object({ authorizations: z.array(authorizationSchema) }).meta({ id: 'AuthorizationList' });
