import { z } from 'zod';
import { shownNameSchema } from './shown-names';
import { clientIdSchema, instantInputSchema, isoDateSchema, organizationIdSchema, recipientAccountIdSchema, utcInstantSchema } from './ids';

export const RECIPIENT_TYPES = ['insurance_provider', 'auditor', 'regulatory_body', 'partner'] as const;
export const recipientTypeSchema = z.enum(RECIPIENT_TYPES).meta({ id: 'RecipientType' });
export type RecipientType = z.infer<typeof recipientTypeSchema>;

export const SCOPES = ['qr_score', 'score_trend', 'pillar_breakdown'] as const;
export const scopeSchema = z.enum(SCOPES).meta({ id: 'Scope' });
export type Scope = z.infer<typeof scopeSchema>;

export const MAX_ALLOWED_CIDRS = 32;

/**
 * Why an authorization was revoked (decisions 42–43, 50): by its organization, released by the recipient
 * from its portfolio, ended because its key was reported leaked, declined by the recipient account it
 * was offered to, or ended by an access review (decision 54). Null while not revoked.
 */
export const REVOCATION_REASONS = [
  'organization',
  'released_by_recipient',
  'key_leaked',
  'declined_by_recipient',
  'access_review',
  'organization_offboarded',
] as const;
export const revocationReasonSchema = z.enum(REVOCATION_REASONS).meta({ id: 'RevocationReason' });
export type RevocationReason = z.infer<typeof revocationReasonSchema>;

/** `pending`: offered to a recipient account that has not accepted it yet; nothing reads it meanwhile. */
export const AUTHORIZATION_STATUSES = ['active', 'revoked', 'expired', 'pending'] as const;
export const authorizationStatusSchema = z.enum(AUTHORIZATION_STATUSES).meta({ id: 'AuthorizationStatus' });
export type AuthorizationStatus = z.infer<typeof authorizationStatusSchema>;

/**
 * How the key reaches the recipient. `claimLink` (decision 38): no key exists until the recipient
 * claims it by a one-time link. `account` (decision 42): the grant is offered to a recipient account,
 * which reads it with its own key once it accepts it (at once if it accepts the organization's offers
 * automatically); it has no key of its own.
 */
export const KEY_DELIVERIES = ['response', 'claimLink', 'account'] as const;
export const keyDeliverySchema = z.enum(KEY_DELIVERIES).meta({ id: 'KeyDelivery' });
export type KeyDelivery = z.infer<typeof keyDeliverySchema>;
export const CLAIM_VALID_SECONDS = { min: 3600, max: 604_800, default: 259_200 } as const;

/** POST /v1/organizations/{organizationId}/authorizations */
export const createAuthorizationRequestSchema = z
  .strictObject({
    recipientType: recipientTypeSchema,
    // Shown in lists, tables, the console and logs.
    recipientName: shownNameSchema('Who the grant is for, as the organization shows it').optional(),
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
    keyDelivery: keyDeliverySchema.optional().meta({
      description:
        '`response` (default): the key is in the 201. `claimLink`: no key exists yet; the 201 carries a one-time link the recipient claims it by. `account`: the grant is offered to the recipient account `recipientAccountId` (status `pending`) and has no key of its own; the account reads it once it accepts',
    }),
    claimValidSeconds: claimValidSecondsSchema().optional(),
    recipientAccountId: recipientAccountIdSchema
      .optional()
      .meta({ description: 'With `keyDelivery: "account"` only, and required there: the recipient account the grant is offered to' }),
  })
  .meta({ id: 'CreateAuthorizationRequest' });

function claimValidSecondsSchema() {
  return z
    .int()
    .min(CLAIM_VALID_SECONDS.min)
    .max(CLAIM_VALID_SECONDS.max)
    .meta({ description: `How long a claim link works, in seconds (default ${CLAIM_VALID_SECONDS.default}, 72 h)` });
}

/** POST /v1/organizations/{organizationId}/authorizations/{clientId}/claim-link (decision 38); the body is optional. */
export const issueClaimLinkRequestSchema = z
  .strictObject({ claimValidSeconds: claimValidSecondsSchema().optional() })
  .meta({ id: 'IssueClaimLinkRequest' });

export const MAX_OVERLAP_SECONDS = 604_800;
export const DEFAULT_OVERLAP_SECONDS = 86_400;
/** POST /v1/organizations/{organizationId}/authorizations/{clientId}/rotate (decision 19); the body is optional. */
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
    keyClaimed: z.boolean().meta({
      description:
        'Decision 38: false while a key delivered by claim link waits to be claimed, or while a grant offered to a recipient account waits for its acceptance; true otherwise',
    }),
    claimedAt: utcInstantSchema.nullable().meta({ description: 'When the recipient claimed the key by its link; null otherwise' }),
    claimedFromAddress: z
      .string()
      .max(64)
      .nullable()
      .meta({ description: 'The client address the key was claimed from; null until claimed' }),
    revocationReason: revocationReasonSchema.nullable().meta({ description: 'Why it was revoked; null while not revoked' }),
    recipientAccountId: recipientAccountIdSchema.nullable().meta({
      description:
        'The recipient account (portfolio) this grant was offered to, as the organization named it; it holds the grant once it has accepted it (`status` is `pending` until then). Null when the grant has a key of its own',
    }),
    recipientAccountName: z
      .string()
      .nullable()
      .meta({ description: "That account's name, once the account holds the grant; null before, or without an account or a name" }),
  })
  .meta({ id: 'Authorization' });
export type Authorization = z.infer<typeof authorizationSchema>;

/** The 201 of a create with the key in the response: the only response to an organization that ever contains `apiKey`. */
export const createdAuthorizationSchema = authorizationSchema
  .extend({ apiKey: z.string().meta({ description: 'Shown exactly once; store it now' }) })
  .meta({ id: 'CreatedAuthorization' });
export type CreatedAuthorization = z.infer<typeof createdAuthorizationSchema>;

/** Decision 38: a one-time link, shown once to the organization; the service keeps only its digest. */
export const claimLinkSchema = z
  .object({
    url: z.string().meta({ description: 'Works once: a GET shows what is granted, a POST creates and shows the key' }),
    expiresAt: utcInstantSchema.meta({ description: 'First instant at which the link no longer works' }),
  })
  .meta({ id: 'ClaimLink' });
export type ClaimLink = z.infer<typeof claimLinkSchema>;

/** The 201 of a create by claim link, and the 200 of a new link: no key, the link instead. */
export const authorizationWithClaimLinkSchema = authorizationSchema
  .extend({ claim: claimLinkSchema })
  .meta({ id: 'AuthorizationWithClaimLink' });
export type AuthorizationWithClaimLink = z.infer<typeof authorizationWithClaimLinkSchema>;

export const createAuthorizationResponseSchema = z
  .union([createdAuthorizationSchema, authorizationWithClaimLinkSchema, authorizationSchema])
  .meta({ id: 'CreateAuthorizationResponse' });

/** GET /claim/{token} as JSON: what the link grants, and nothing it could be used with. */
export const claimGrantSchema = z
  .object({
    organizationId: organizationIdSchema,
    clientId: clientIdSchema,
    recipientName: z.string().nullable(),
    recipientType: recipientTypeSchema,
    scopes: z.array(scopeSchema),
    expiresAt: utcInstantSchema.nullable().meta({ description: "The authorization's expiry; null: none" }),
    claimExpiresAt: utcInstantSchema.meta({ description: 'First instant at which the link no longer works' }),
  })
  .meta({ id: 'ClaimGrant' });
export type ClaimGrant = z.infer<typeof claimGrantSchema>;

/** POST /claim/{token} as JSON: the key, shown this once. */
export const claimedKeySchema = z
  .object({
    clientId: clientIdSchema,
    apiKey: z.string().meta({ description: 'Shown exactly once; store it now' }),
  })
  .meta({ id: 'ClaimedKey' });
export type ClaimedKey = z.infer<typeof claimedKeySchema>;

/**
 * POST /claim/{token} with a JSON body (decision 42): `into: "account"` claims the grant into a
 * recipient account instead of a key of its own; without `x-api-key` a new account is made (named
 * `accountName`), with an account key the grant joins that account.
 */
export const claimRequestSchema = z
  .strictObject({
    into: z.enum(['key', 'account']).optional().meta({ description: '`key` (default): a key of its own. `account`: into a portfolio' }),
    accountName: shownNameSchema('The name of the account a claim without x-api-key makes').optional(),
  })
  .meta({ id: 'ClaimRequest' });
export type ClaimRequest = z.infer<typeof claimRequestSchema>;

/** The 201 of a claim into a new account: the account key, shown this once. */
export const claimedIntoNewAccountSchema = z
  .object({
    accountId: recipientAccountIdSchema,
    accountKey: z.string().meta({ description: 'Shown exactly once; store it now. Reads every grant the account holds' }),
    clientId: clientIdSchema,
  })
  .meta({ id: 'ClaimedIntoNewAccount' });
export type ClaimedIntoNewAccount = z.infer<typeof claimedIntoNewAccountSchema>;

/** The 201 of a claim into an existing account: no key. */
export const joinedAccountSchema = z
  .object({ accountId: recipientAccountIdSchema, clientId: clientIdSchema })
  .meta({ id: 'JoinedAccount' });
export type JoinedAccount = z.infer<typeof joinedAccountSchema>;

/** POST /claim/{token} as JSON: a key of its own, or (decision 42) the account the grant joined. */
export const claimAnswerSchema = z.union([claimedKeySchema, claimedIntoNewAccountSchema, joinedAccountSchema]).meta({ id: 'ClaimAnswer' });

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

export const AUTHORIZATION_LIST_LIMIT = { min: 1, max: 500, default: 100 } as const;

/**
 * GET …/authorizations. Decision 54: without `limit` or `cursor` every grant that matches comes in one
 * answer, as before (`nextCursor` null); with either, a page.
 */
export const authorizationListSchema = z
  .object({
    authorizations: z.array(authorizationSchema).meta({ description: 'Newest first' }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null when there is none' }),
  })
  .meta({ id: 'AuthorizationList' });
