import { z } from 'zod';
import { alertDataSchema, type AlertType } from './alerts';
import { ALERT_TYPES, RECIPIENT_WEBHOOK_EVENT_TYPES } from './event-names';
import { clientIdSchema, isoDateSchema, utcInstantSchema } from './ids';
import { datedScoreShape, gradeSchema, pillarScoresSchema, scoreValueSchema } from './resources';

// Decisions 26–28: the notifier's API and what it delivers.

/** Every event a webhook may subscribe to: a recipient's, and an organization's alerts (decision 44). */
export const WEBHOOK_EVENT_TYPES = [...RECIPIENT_WEBHOOK_EVENT_TYPES, ...ALERT_TYPES] as const;
export const webhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES).meta({ id: 'WebhookEventType' });
export type WebhookEventType = z.infer<typeof webhookEventTypeSchema>;

/**
 * Whose webhook it is (decision 45: one lifecycle for every owner). Each owner has its own path, its
 * own authentication and its own events; the store keeps a webhook under its owner's key
 * (`webhookOwnerKey` in the domain). A grant's webhooks (decision 26) and a recipient account's,
 * fired for every grant it holds (decision 42), and an organization's, which hears its alerts (decision 44).
 */
export type WebhookOwner =
  { kind: 'grant'; clientId: string } | { kind: 'portfolio'; accountId: string } | { kind: 'organization'; organizationId: string };

export const MAX_WEBHOOKS_PER_AUTHORIZATION = 10;
/** Decision 42: a recipient account's webhooks, as many as a grant's. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 10;
/** Decision 44: an organization's alert webhooks, as many as a grant's. */
export const MAX_WEBHOOKS_PER_ORGANIZATION = 10;
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** `wh_` and base62, like Client IDs; never contains a `.`. */
export const webhookIdSchema = z
  .string()
  .regex(/^wh_[A-Za-z0-9]{16,64}$/, 'must be wh_<16-64 letters or digits>')
  .meta({ id: 'WebhookId', example: 'wh_7Qm2ZkP9xW4nTcL8vB3dRf6Y' });

/**
 * The `webhook-id` header: one per event and subscription, the same on every retry, so a recipient
 * can use it as its idempotency key. Standard Webhooks signs `{id}.{timestamp}.{body}`: no `.` here.
 */
export const webhookMessageIdSchema = z
  .string()
  .regex(/^msg_[A-Za-z0-9]{16,64}$/, 'must be msg_<16-64 letters or digits>')
  .meta({ id: 'WebhookMessageId', example: 'msg_2KWPBgLlAfxdpx2AI54pPJ85' });

/** `whsec_` and the base64 of the key's bytes (32 random bytes when the notifier makes it). */
export const webhookSecretSchema = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be whsec_<base64>')
  .meta({ id: 'WebhookSecret' });

/**
 * Decision 45: which score changes a webhook hears of. A change is delivered when any condition
 * present holds; none (`{}`) means every change. Only `score.updated` is filtered.
 */
export const webhookConditionsSchema = z
  .strictObject({
    scoreBelow: scoreValueSchema.min(1).optional().meta({ description: 'Holds when the new latest score is below this (1 to 100)' }),
    scoreDropAtLeast: scoreValueSchema
      .min(1)
      .optional()
      .meta({ description: 'Holds when the new latest score is at least this much below the previous latest (1 to 100)' }),
    gradeChanged: z
      .literal(true, { error: 'must be true (leave it out for no grade condition)' })
      .optional()
      .meta({ description: 'Holds when the new latest score has another grade than the previous latest' }),
  })
  .meta({ id: 'WebhookConditions' });
export type WebhookConditions = z.infer<typeof webhookConditionsSchema>;

const webhookUrlSchema = z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH).meta({
  description: 'An https URL without credentials; it must not resolve to a loopback, private, link-local or cloud-metadata address',
  example: 'https://hooks.example.com/resilience',
});

const webhookEventListSchema = z
  .array(webhookEventTypeSchema)
  .min(1)
  .refine((events) => new Set(events).size === events.length, 'must not repeat an event type');

/** POST /v1/customers/{clientId}/webhooks */
export const createWebhookRequestSchema = z
  .strictObject({
    url: webhookUrlSchema,
    events: webhookEventListSchema,
    conditions: webhookConditionsSchema.optional(),
  })
  .meta({ id: 'CreateWebhookRequest' });
export type CreateWebhookRequest = z.infer<typeof createWebhookRequestSchema>;

/**
 * `paused`: its owner turned it off (`enabled: false`); `disabled`: the notifier stopped sending to
 * it, for the reason `disabledReason` gives. Either comes back with `enabled: true` (decision 45), a
 * webhook disabled for its key with its URL set again in the same change (decision 50).
 */
export const WEBHOOK_STATUSES = ['active', 'paused', 'disabled'] as const;
export const webhookStatusSchema = z.enum(WEBHOOK_STATUSES).meta({ id: 'WebhookStatus' });
export type WebhookStatus = z.infer<typeof webhookStatusSchema>;

/**
 * Why a webhook is disabled. `delivery_failures`: its deliveries failed for 24 h (decision 45).
 * `key_ended`: the key that made it (or last set its URL) was cut off by a rotation without an
 * overlap; `key_leaked`: a key of its grant or account was reported leaked (decision 50). Either of
 * the last two comes back only with its URL set again.
 */
export const WEBHOOK_DISABLED_REASONS = ['delivery_failures', 'key_ended', 'key_leaked'] as const;
export const webhookDisabledReasonSchema = z.enum(WEBHOOK_DISABLED_REASONS).meta({ id: 'WebhookDisabledReason' });
export type WebhookDisabledReason = z.infer<typeof webhookDisabledReasonSchema>;
/** The reasons that end a webhook with the key that made it: re-enabled only by setting its URL again. */
export const KEY_DISABLED_REASONS = ['key_ended', 'key_leaked'] as const satisfies readonly WebhookDisabledReason[];
export type KeyDisabledReason = (typeof KEY_DISABLED_REASONS)[number];

/** What list returns: never carries the secret. */
export const webhookSchema = z
  .object({
    id: webhookIdSchema,
    url: z.string(),
    events: z.array(webhookEventTypeSchema),
    status: webhookStatusSchema,
    disabledReason: webhookDisabledReasonSchema.nullable().meta({
      description:
        'Why it is disabled; null while active or paused. key_ended and key_leaked: re-enable it with its url set again and enabled: true',
    }),
    conditions: webhookConditionsSchema.meta({ description: 'Filters score.updated; `{}` when every change is delivered' }),
    createdAt: utcInstantSchema,
  })
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof webhookSchema>;

/** The 201 of a create: the only response that ever contains the secret. */
export const createdWebhookSchema = webhookSchema
  .extend({ secret: webhookSecretSchema.meta({ description: 'Verifies the webhook-signature header; shown exactly once' }) })
  .meta({ id: 'CreatedWebhook' });
export type CreatedWebhook = z.infer<typeof createdWebhookSchema>;

/** PATCH …/webhooks/{id} (decision 45): what is given changes, the rest stays. */
export const updateWebhookRequestSchema = z
  .strictObject({
    url: webhookUrlSchema.optional(),
    events: webhookEventListSchema.optional(),
    enabled: z
      .boolean()
      .optional()
      .meta({
        description:
          'false pauses it; true re-enables one paused or disabled (deliveries resume from then); one disabled for its key ' +
          '(key_ended, key_leaked) only together with `url`',
      }),
    conditions: webhookConditionsSchema.optional().meta({ description: 'Replaces the conditions as a whole; `{}` removes them' }),
  })
  .refine((body) => Object.keys(body).length > 0, 'must change at least one of url, events, enabled, conditions')
  .meta({ id: 'UpdateWebhookRequest' });
export type UpdateWebhookRequest = z.infer<typeof updateWebhookRequestSchema>;

export const MAX_SECRET_OVERLAP_SECONDS = 86_400;

/** POST …/webhooks/{id}/rotate-secret (decision 45). */
export const rotateWebhookSecretRequestSchema = z
  .strictObject({
    overlapSeconds: z.int().min(0).max(MAX_SECRET_OVERLAP_SECONDS).meta({
      description: 'How long deliveries are also signed with the previous secret (0 to 86400)',
    }),
  })
  .meta({ id: 'RotateWebhookSecretRequest' });
export type RotateWebhookSecretRequest = z.infer<typeof rotateWebhookSecretRequestSchema>;

export const rotatedWebhookSecretSchema = z
  .object({ secret: webhookSecretSchema.meta({ description: 'The new signing secret; shown exactly once' }) })
  .meta({ id: 'RotatedWebhookSecret' });
export type RotatedWebhookSecret = z.infer<typeof rotatedWebhookSecretSchema>;

/** The 202 of a test or a redelivery: the `webhook-id` it is sent with, as the deliveries list will name it. */
export const webhookMessageAcceptedSchema = z
  .object({ messageId: webhookMessageIdSchema.meta({ description: 'The webhook-id header the delivery carries' }) })
  .meta({ id: 'WebhookMessageAccepted' });
export type WebhookMessageAccepted = z.infer<typeof webhookMessageAcceptedSchema>;

export const webhookListSchema = z.object({ webhooks: z.array(webhookSchema) }).meta({ id: 'WebhookList' });
export type WebhookList = z.infer<typeof webhookListSchema>;

/** `skipped`: not sent, and never will be (`skipped` says why); not a failure, so never retried. */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export const webhookDeliveryStatusSchema = z.enum(WEBHOOK_DELIVERY_STATUSES).meta({ id: 'WebhookDeliveryStatus' });
export type WebhookDeliveryStatus = z.infer<typeof webhookDeliveryStatusSchema>;

/** Why an attempt failed, without internals: the recipient can tell its own problem from a refused target. */
export const WEBHOOK_DELIVERY_FAILURES = ['response_status', 'timeout', 'connection_failed', 'target_not_allowed'] as const;
export const webhookDeliveryFailureSchema = z.enum(WEBHOOK_DELIVERY_FAILURES).meta({ id: 'WebhookDeliveryFailure' });
export type WebhookDeliveryFailure = z.infer<typeof webhookDeliveryFailureSchema>;

/**
 * Why a delivery was skipped: `address_not_allowed`, the grant whose data it carries has an allow list
 * (`allowedCidrs`) and the address the receiver's host resolved to when it was due is outside it.
 */
export const WEBHOOK_DELIVERY_SKIPS = ['address_not_allowed'] as const;
export const webhookDeliverySkipSchema = z.enum(WEBHOOK_DELIVERY_SKIPS).meta({ id: 'WebhookDeliverySkip' });
export type WebhookDeliverySkip = z.infer<typeof webhookDeliverySkipSchema>;

/** What a delivery can be: a subscribed event, or the test delivery its owner asked for. */
export const WEBHOOK_PAYLOAD_TYPES = [...WEBHOOK_EVENT_TYPES, 'webhook.test'] as const;
export const webhookPayloadTypeSchema = z.enum(WEBHOOK_PAYLOAD_TYPES).meta({ id: 'WebhookPayloadType' });
export type WebhookPayloadType = z.infer<typeof webhookPayloadTypeSchema>;

/**
 * One attempt, as GET …/webhooks/{id}/deliveries lists it. An attempt is named by `messageId` (the
 * `webhook-id` header the recipient received) and its number: the subscription is the one in the path,
 * and a field called `webhookId` would be read as that header.
 */
export const webhookDeliverySchema = z
  .object({
    messageId: webhookMessageIdSchema.meta({ description: 'The webhook-id header; the same on every attempt of one event' }),
    eventType: webhookPayloadTypeSchema,
    attempt: z.int().min(1).meta({ description: '1 for the first attempt, 2 for the first retry, …' }),
    status: webhookDeliveryStatusSchema.meta({ description: 'pending: not answered yet (scheduled or in flight)' }),
    responseCode: z
      .int()
      .min(100)
      .max(599)
      .nullable()
      .meta({ description: 'The HTTP status the target answered; null when it did not answer (pending, timeout, connection failed)' }),
    failure: webhookDeliveryFailureSchema.nullable().meta({ description: 'Why a failed attempt failed; null unless status is failed' }),
    skipped: webhookDeliverySkipSchema.optional().meta({
      description:
        "Only when status is skipped: why nothing was sent. address_not_allowed: the grant whose data it carries allows other addresses than the one the receiver's host resolved to when it was due; skipped for good (not retried, not a failure)",
    }),
    scheduledAt: utcInstantSchema.meta({ description: 'When the attempt was or is due' }),
    attemptedAt: utcInstantSchema
      .nullable()
      .meta({ description: 'When the request was sent (or, when skipped, when its address was checked); null until it is' }),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const webhookDeliveryListSchema = z
  .object({ deliveries: z.array(webhookDeliverySchema).meta({ description: 'Newest first' }) })
  .meta({ id: 'WebhookDeliveryList' });
export type WebhookDeliveryList = z.infer<typeof webhookDeliveryListSchema>;

/**
 * Decision 27's `data`, never more than the authorization's scopes allow: score and grade need
 * `qr_score`, `pillarScores` also `pillar_breakdown`. Objects are not strict so that a recipient's
 * parser keeps working when a field is added.
 */
export const scoreUpdatedDataSchema = z
  .object({
    clientId: clientIdSchema,
    ...datedScoreShape,
    pillarScores: pillarScoresSchema.optional().meta({ description: 'Only when the authorization also holds pillar_breakdown' }),
  })
  .meta({ id: 'ScoreUpdatedData' });
export type ScoreUpdatedData = z.infer<typeof scoreUpdatedDataSchema>;

export const gradeChangedDataSchema = z
  .object({ clientId: clientIdSchema, scoreDate: isoDateSchema, from: gradeSchema, to: gradeSchema })
  .meta({ id: 'GradeChangedData' });
export type GradeChangedData = z.infer<typeof gradeChangedDataSchema>;

export const AUTHORIZATION_END_REASONS = ['revoked', 'expired'] as const;
export type AuthorizationEndReason = (typeof AUTHORIZATION_END_REASONS)[number];
export const authorizationEndedDataSchema = z
  .object({
    clientId: clientIdSchema,
    reason: z.enum(AUTHORIZATION_END_REASONS),
    endedAt: utcInstantSchema.meta({ description: 'When it was revoked, or when it expired' }),
  })
  .meta({ id: 'AuthorizationEndedData' });
export type AuthorizationEndedData = z.infer<typeof authorizationEndedDataSchema>;

const payloadTimestampSchema = utcInstantSchema.meta({ description: 'When the event happened (a retry keeps it)' });

export const scoreUpdatedPayloadSchema = z
  .object({ type: z.literal('score.updated'), timestamp: payloadTimestampSchema, data: scoreUpdatedDataSchema })
  .meta({ id: 'ScoreUpdatedWebhook' });
export const gradeChangedPayloadSchema = z
  .object({ type: z.literal('grade.changed'), timestamp: payloadTimestampSchema, data: gradeChangedDataSchema })
  .meta({ id: 'GradeChangedWebhook' });
export const authorizationEndedPayloadSchema = z
  .object({ type: z.literal('authorization.ended'), timestamp: payloadTimestampSchema, data: authorizationEndedDataSchema })
  .meta({ id: 'AuthorizationEndedWebhook' });

/** Decision 44: one payload schema per alert type, each `{ type, timestamp, data }` with the alert's data. */
function alertPayloadSchema<Type extends AlertType>(type: Type, id: string, description: string) {
  return z.object({ type: z.literal(type), timestamp: payloadTimestampSchema, data: alertDataSchema }).meta({ id, description });
}
export const authorizationExpiringPayloadSchema = alertPayloadSchema(
  'authorization.expiring',
  'AuthorizationExpiringWebhook',
  'A grant expires in 7 days, then in 1 day (`data.expiresAt`)',
);
export const authorizationFirstUsePayloadSchema = alertPayloadSchema(
  'authorization.first_use',
  'AuthorizationFirstUseWebhook',
  "A grant's first successful read (`data.address`)",
);
export const authorizationNewAddressPayloadSchema = alertPayloadSchema(
  'authorization.new_address',
  'AuthorizationNewAddressWebhook',
  'A successful read from an address not seen for the grant in the previous 30 days (`data.address`)',
);
export const authorizationAuthFailuresPayloadSchema = alertPayloadSchema(
  'authorization.auth_failures',
  'AuthorizationAuthFailuresWebhook',
  'At least 20 failed authentications against the Client ID within 5 minutes (`data.failures`); at most one an hour',
);
/** Decision 50: the key_leaked alert also says how many of the grant's webhooks the leak disabled. */
export const keyLeakedAlertDataSchema = alertDataSchema
  .extend({
    webhooksDisabled: z.int().min(0).meta({
      description: "How many of the grant's webhooks the leak disabled (disabledReason key_leaked), whichever key made them",
    }),
  })
  .meta({ id: 'KeyLeakedAlertData', description: 'The grant, and how many of its webhooks the leak disabled' });
export type KeyLeakedAlertData = z.infer<typeof keyLeakedAlertDataSchema>;
export const authorizationKeyLeakedPayloadSchema = z
  .object({ type: z.literal('authorization.key_leaked'), timestamp: payloadTimestampSchema, data: keyLeakedAlertDataSchema })
  .meta({
    id: 'AuthorizationKeyLeakedWebhook',
    description: "A key of the grant was reported leaked and stopped working; `data.webhooksDisabled`: the grant's webhooks it disabled",
  });
export const authorizationReleasedPayloadSchema = alertPayloadSchema(
  'authorization.released',
  'AuthorizationReleasedWebhook',
  'The recipient released the grant from its portfolio',
);

/** Decision 54: an access review's alerts name the review, not a grant. */
export const accessReviewDueSoonDataSchema = z
  .object({
    reviewId: z.string().meta({ description: 'The review (`arv_…`)' }),
    dueAt: utcInstantSchema.meta({ description: 'When its undecided items are settled by its onOverdue' }),
    pending: z.int().min(0).meta({ description: 'Items still undecided when the alert was raised' }),
  })
  .meta({ id: 'AccessReviewDueSoonData' });
export const accessReviewCompletedDataSchema = z
  .object({
    reviewId: z.string().meta({ description: 'The review (`arv_…`)' }),
    completedAt: utcInstantSchema,
    kept: z.int().min(0),
    revoked: z.int().min(0),
  })
  .meta({ id: 'AccessReviewCompletedData' });
export type AccessReviewAlertData = z.infer<typeof accessReviewDueSoonDataSchema> | z.infer<typeof accessReviewCompletedDataSchema>;
export const accessReviewDueSoonPayloadSchema = z
  .object({ type: z.literal('access_review.due_soon'), timestamp: payloadTimestampSchema, data: accessReviewDueSoonDataSchema })
  .meta({
    id: 'AccessReviewDueSoonWebhook',
    description: 'An access review is due within 3 days (or at once when created nearer its due time)',
  });
export const accessReviewCompletedPayloadSchema = z
  .object({ type: z.literal('access_review.completed'), timestamp: payloadTimestampSchema, data: accessReviewCompletedDataSchema })
  .meta({ id: 'AccessReviewCompletedWebhook', description: 'Every item of an access review is decided: by reviewers, or at its due time' });

export const webhookTestDataSchema = z
  .object({ webhookId: webhookIdSchema.meta({ description: 'The webhook that was asked to send it' }) })
  .meta({ id: 'WebhookTestData' });
export type WebhookTestData = z.infer<typeof webhookTestDataSchema>;
export const webhookTestPayloadSchema = z
  .object({
    type: z.literal('webhook.test'),
    timestamp: utcInstantSchema.meta({ description: 'When the test was asked for' }),
    data: webhookTestDataSchema,
  })
  .meta({ id: 'WebhookTestWebhook' });

/** The JSON body of a delivery (Standard Webhooks: `{ type, timestamp, data }`). */
export const webhookPayloadSchema = z
  .discriminatedUnion('type', [
    scoreUpdatedPayloadSchema,
    gradeChangedPayloadSchema,
    authorizationEndedPayloadSchema,
    authorizationExpiringPayloadSchema,
    authorizationFirstUsePayloadSchema,
    authorizationNewAddressPayloadSchema,
    authorizationAuthFailuresPayloadSchema,
    authorizationKeyLeakedPayloadSchema,
    authorizationReleasedPayloadSchema,
    accessReviewDueSoonPayloadSchema,
    accessReviewCompletedPayloadSchema,
    webhookTestPayloadSchema,
  ])
  .meta({ id: 'WebhookPayload' });
export type ScoreUpdatedPayload = z.infer<typeof scoreUpdatedPayloadSchema>;
export type GradeChangedPayload = z.infer<typeof gradeChangedPayloadSchema>;
export type AuthorizationEndedPayload = z.infer<typeof authorizationEndedPayloadSchema>;
export type AlertPayload =
  | z.infer<typeof authorizationExpiringPayloadSchema>
  | z.infer<typeof authorizationFirstUsePayloadSchema>
  | z.infer<typeof authorizationNewAddressPayloadSchema>
  | z.infer<typeof authorizationAuthFailuresPayloadSchema>
  | z.infer<typeof authorizationKeyLeakedPayloadSchema>
  | z.infer<typeof authorizationReleasedPayloadSchema>
  | z.infer<typeof accessReviewDueSoonPayloadSchema>
  | z.infer<typeof accessReviewCompletedPayloadSchema>;
export type WebhookTestPayload = z.infer<typeof webhookTestPayloadSchema>;
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;
