import { z } from 'zod';
import { alertDetailsShape, alertTypeSchema } from './alerts';
import { accessReviewDecisionSchema, accessReviewGrantShape, accessReviewIdSchema, accessReviewStartShape } from './access-reviews';
import { auditActorSchema, auditShape, auditStampSchema } from './audit';
import { recipientTypeSchema, revocationReasonSchema, scopeSchema } from './authorization';
import { clientIdSchema, organizationIdSchema, recipientAccountIdSchema, utcInstantSchema } from './ids';
import { calculatedScoreSchema } from './resources';
import { webhookIdSchema } from './webhooks';

/** The topics are the event store: every projection can be rebuilt from offset zero. */
export const TOPICS = {
  authorizations: 'rsd.authorizations.v1',
  scores: 'rsd.scores.v1',
  deadLetter: 'rsd.dead-letter.v1',
  /**
   * Decision 54: the notifier's changes to webhooks and alert subscriptions, each with who made it (the
   * notifier keeps no other events). Kept forever like the others: it is the audit trail's record.
   */
  webhookChanges: 'rsd.webhook-changes.v1',
} as const;

export const EVENT_TYPES = {
  authorizationCreated: 'com.resiliencescore.authorization.created.v1',
  authorizationRevoked: 'com.resiliencescore.authorization.revoked.v1',
  authorizationExpired: 'com.resiliencescore.authorization.expired.v1',
  authorizationKeyRotated: 'com.resiliencescore.authorization.key-rotated.v1',
  authorizationKeyClaimed: 'com.resiliencescore.authorization.key-claimed.v1',
  authorizationJoinedAccount: 'com.resiliencescore.authorization.joined-account.v1',
  recipientAccountCreated: 'com.resiliencescore.recipient-account.created.v1',
  recipientAccountKeyRotated: 'com.resiliencescore.recipient-account.key-rotated.v1',
  authorizationPreviousKeyRevoked: 'com.resiliencescore.authorization.previous-key-revoked.v1',
  recipientAccountKeyRevoked: 'com.resiliencescore.recipient-account.key-revoked.v1',
  authorizationAlerted: 'com.resiliencescore.authorization.alerted.v1',
  scoreCalculated: 'com.resiliencescore.score.calculated.v1',
  accessReviewCreated: 'com.resiliencescore.access-review.created.v1',
  accessReviewItemDecided: 'com.resiliencescore.access-review.item-decided.v1',
  accessReviewCompleted: 'com.resiliencescore.access-review.completed.v1',
  accessReviewDueSoon: 'com.resiliencescore.access-review.due-soon.v1',
  organizationOffboarded: 'com.resiliencescore.organization.offboarded.v1',
  recipientErased: 'com.resiliencescore.recipient.erased.v1',
} as const;

/** A SHA-256 digest of the API key, hex. The raw key never travels. */
export const keyDigestSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256 digest');

/**
 * W3C Trace Context's `traceparent`, version 00 (`00-{trace-id}-{parent-id}-{flags}`, lowercase hex, ids
 * not all zeros), or a later version's, which starts the same way and may carry more after a `-`;
 * version ff is invalid.
 */
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}(-[ -~]*)?$/;
/** A `tracestate` member: a key (simple, or `tenant@system`) and a value of printable ASCII but `,` and `=`. */
const TRACESTATE_MEMBER =
  /^([a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[ -+\--<>-~]{0,255}[!-+\--<>-~]$/;

export const traceparentSchema = z
  .string()
  .max(512)
  .refine((value) => TRACEPARENT.test(value) && (value.startsWith('00-') ? value.length === 55 : true), 'must be a W3C traceparent');

export const tracestateSchema = z
  .string()
  .max(512)
  .refine((value) => {
    const members = value
      .split(',')
      .map((member) => member.trim())
      .filter((member) => member !== '');
    return members.length <= 32 && members.every((member) => TRACESTATE_MEMBER.test(member));
  }, 'must be a W3C tracestate');

/**
 * The CloudEvents distributed-tracing extension (decision 39): the context the event was appended in,
 * so its consumers continue that trace. Optional (events written untraced, or before it, have none),
 * and checked like every attribute, but a malformed one is dropped rather than refusing the event, as
 * W3C Trace Context has a receiver ignore a malformed header: telemetry never costs a score.
 */
const traceExtension = {
  traceparent: traceparentSchema.optional().catch(undefined),
  tracestate: tracestateSchema.optional().catch(undefined),
};

function cloudEvent<Type extends string, Data extends z.ZodType>(type: Type, data: Data) {
  return z.object({
    specversion: z.literal('1.0'),
    id: z.string().min(1),
    source: z.string().min(1),
    type: z.literal(type),
    subject: z.string().min(1),
    time: utcInstantSchema,
    datacontenttype: z.literal('application/json'),
    ...traceExtension,
    data,
  });
}

/**
 * An event that records a change someone made (decision 54): its data may carry who made it, from
 * where and in which request, so the event log is the audit trail's record.
 */
function changeEvent<Type extends string, Shape extends z.ZodRawShape>(type: Type, data: z.ZodObject<Shape>) {
  return cloudEvent(type, data.extend(auditShape));
}

/** Revisions order an authorization's events; projections apply an event only if it is newer. */
const revisionSchema = z.int().min(1);

export const authorizationCreatedSchema = changeEvent(
  EVENT_TYPES.authorizationCreated,
  z.object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    recipientType: recipientTypeSchema,
    recipientName: z.string().nullable(),
    scopes: z.array(scopeSchema).min(1),
    expiresAt: utcInstantSchema.nullable(),
    /** Decision 38: null while the key waits to be claimed by its link (no key exists yet); every key is refused until then. */
    keyDigest: keyDigestSchema.nullable(),
    createdAt: utcInstantSchema,
    revision: revisionSchema,
    /** Absent in events written before decision 22: no allow list. */
    allowedCidrs: z.array(z.string()).nullable().optional(),
    /** Decision 42: granted straight to a recipient account (no key of its own); absent or null otherwise. */
    recipientAccountId: recipientAccountIdSchema.nullable().optional(),
  }),
);

/**
 * Decision 42: a grant claimed by its link into a recipient account. It carries what the account's
 * portfolio lists of the grant (a grant's scopes, expiry and allow list never change), so the
 * portfolio's view needs no other event; no key, no link, no address.
 */
export const authorizationJoinedAccountSchema = changeEvent(
  EVENT_TYPES.authorizationJoinedAccount,
  z.object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    recipientAccountId: recipientAccountIdSchema,
    recipientType: recipientTypeSchema,
    scopes: z.array(scopeSchema).min(1),
    expiresAt: utcInstantSchema.nullable(),
    allowedCidrs: z.array(z.string()).nullable(),
    joinedAt: utcInstantSchema,
    revision: revisionSchema,
  }),
);

/** Decision 42: a recipient account and the digest of its first key. */
export const recipientAccountCreatedSchema = changeEvent(
  EVENT_TYPES.recipientAccountCreated,
  z.object({
    accountId: recipientAccountIdSchema,
    name: z.string().nullable(),
    keyDigest: keyDigestSchema,
    createdAt: utcInstantSchema,
    revision: revisionSchema,
  }),
);

/** Decision 42: the account key rotated, as decision 19 rotates a grant's key; digests only. */
export const recipientAccountKeyRotatedSchema = changeEvent(
  EVENT_TYPES.recipientAccountKeyRotated,
  z.object({
    accountId: recipientAccountIdSchema,
    keyDigest: keyDigestSchema,
    previousKeyDigest: keyDigestSchema.nullable(),
    previousKeyExpiresAt: utcInstantSchema.nullable(),
    rotatedAt: utcInstantSchema,
    revision: revisionSchema,
  }),
);

/** Decision 19: digests only, like every authorization event. */
export const authorizationKeyRotatedSchema = changeEvent(
  EVENT_TYPES.authorizationKeyRotated,
  z.object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    keyDigest: keyDigestSchema,
    previousKeyDigest: keyDigestSchema.nullable(),
    previousKeyExpiresAt: utcInstantSchema.nullable(),
    rotatedAt: utcInstantSchema,
    revision: revisionSchema,
  }),
);

/** Decision 38: the recipient claimed its key by the one-time link; the digest only, never the key, the link or the address. */
export const authorizationKeyClaimedSchema = changeEvent(
  EVENT_TYPES.authorizationKeyClaimed,
  z.object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    keyDigest: keyDigestSchema,
    claimedAt: utcInstantSchema,
    revision: revisionSchema,
  }),
);

/**
 * Decision 43: the previous key of a rotation's overlap was reported leaked and ends alone; the
 * authorization stays active on its current key. The ended key's digest only.
 */
export const authorizationPreviousKeyRevokedSchema = changeEvent(
  EVENT_TYPES.authorizationPreviousKeyRevoked,
  z.object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    previousKeyDigest: keyDigestSchema,
    revokedAt: utcInstantSchema,
    revision: revisionSchema,
  }),
);

/**
 * Decision 43: an account key (the current one, or the previous one of an overlap) was reported
 * leaked and ends alone; the account keeps its grants. The ended key's digest only.
 */
export const recipientAccountKeyRevokedSchema = changeEvent(
  EVENT_TYPES.recipientAccountKeyRevoked,
  z.object({
    accountId: recipientAccountIdSchema,
    keyDigest: keyDigestSchema,
    revokedAt: utcInstantSchema,
    revision: revisionSchema,
  }),
);

export const authorizationRevokedSchema = changeEvent(
  EVENT_TYPES.authorizationRevoked,
  z.object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    revokedAt: utcInstantSchema,
    revision: revisionSchema,
    /** Absent in events written before decision 42: revoked by the organization. */
    revocationReason: revocationReasonSchema.optional(),
  }),
);

export const authorizationExpiredSchema = changeEvent(
  EVENT_TYPES.authorizationExpired,
  z.object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    expiredAt: utcInstantSchema,
    revision: revisionSchema,
  }),
);

/**
 * Decision 44: something the organization hears of that the access log or the clock showed (a
 * grant's first read, a new address, failed authentications, an expiry ahead). Revocations carry
 * their own reason instead. An address, never a key.
 */
export const authorizationAlertedSchema = cloudEvent(
  EVENT_TYPES.authorizationAlerted,
  z.object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    alertId: z.string().regex(/^alr_[A-Za-z0-9]{16,64}$/),
    alert: alertTypeSchema,
    at: utcInstantSchema,
    ...alertDetailsShape,
    revision: revisionSchema,
  }),
);

/**
 * Decision 54: an access review began, with every grant active then as an item (what the grant was
 * when the review began: its recipient and scopes). The review's events are its record: folded in
 * order (`accessReviewView`), they are the review.
 */
export const accessReviewCreatedSchema = changeEvent(
  EVENT_TYPES.accessReviewCreated,
  z.object({
    ...accessReviewStartShape,
    items: z.array(z.object(accessReviewGrantShape)),
    revision: revisionSchema,
  }),
);

/** Decision 54: an item kept or revoked, by a reviewer or (`overdue`) by the review's `onOverdue` at its due time. */
export const accessReviewItemDecidedSchema = changeEvent(
  EVENT_TYPES.accessReviewItemDecided,
  z.object({
    reviewId: accessReviewIdSchema,
    organizationId: organizationIdSchema,
    clientId: clientIdSchema,
    decision: accessReviewDecisionSchema,
    note: z.string().nullable(),
    decidedAt: utcInstantSchema,
    decidedBy: auditActorSchema,
    overdue: z.boolean(),
    revision: revisionSchema,
  }),
);

/** Decision 54: every item decided; the review is closed. */
export const accessReviewCompletedSchema = changeEvent(
  EVENT_TYPES.accessReviewCompleted,
  z.object({
    reviewId: accessReviewIdSchema,
    organizationId: organizationIdSchema,
    completedAt: utcInstantSchema,
    kept: z.int().min(0),
    revoked: z.int().min(0),
    revision: revisionSchema,
  }),
);

/** Decision 54: the review is due within 3 days (the organization's `access_review.due_soon` alert); no one's change. */
export const accessReviewDueSoonSchema = cloudEvent(
  EVENT_TYPES.accessReviewDueSoon,
  z.object({
    reviewId: accessReviewIdSchema,
    organizationId: organizationIdSchema,
    dueAt: utcInstantSchema,
    at: utcInstantSchema,
    pending: z.int().min(0),
    revision: revisionSchema,
  }),
);

/**
 * Decision 56: the organization's grants are revoked and its key destroyed; every service purges what it
 * keeps of it on this event. In clear, with no personal data (ids and an instant).
 */
export const organizationOffboardedSchema = cloudEvent(
  EVENT_TYPES.organizationOffboarded,
  z.object({ organizationId: organizationIdSchema, startedAt: utcInstantSchema }),
);

/**
 * Decision 56: a recipient's own data is erased (its subject's key destroyed): the views drop its name,
 * contact fields and the addresses seen for it, and keep the grant's history. In clear: ids only. One
 * per grant erased (its organization and Client ID), and one for an account's own erasure (its id
 * alone: an account that holds no grant is forgotten too).
 */
export const recipientErasedSchema = cloudEvent(
  EVENT_TYPES.recipientErased,
  z.union([
    z.object({ organizationId: organizationIdSchema, clientId: clientIdSchema, subject: z.string().regex(/^(account|grant):\S+$/) }),
    z.object({ accountId: recipientAccountIdSchema, subject: z.string().regex(/^account:\S+$/) }),
  ]),
);

export const scoreCalculatedSchema = cloudEvent(EVENT_TYPES.scoreCalculated, calculatedScoreSchema);

/**
 * Decision 54: a change the notifier made to a webhook (a recipient's, on one of the organization's
 * grants) or to an alert subscription (an organization's own webhook for its alerts), and who made it.
 * It names the webhook and its owner, never its URL or its secret. On its own topic, not one of the
 * domain's events: nothing but the audit trail follows it.
 */
export const WEBHOOK_CHANGED_EVENT_TYPE = 'com.resiliencescore.webhook.changed.v1';
export const webhookChangedSchema = cloudEvent(
  WEBHOOK_CHANGED_EVENT_TYPE,
  z.object({
    organizationId: organizationIdSchema,
    /** The grant whose webhook changed; null for an organization's alert subscription. */
    clientId: clientIdSchema.nullable(),
    webhookId: webhookIdSchema,
    audit: auditStampSchema,
  }),
);
export type WebhookChanged = z.infer<typeof webhookChangedSchema>;

export const authorizationEventSchema = z.discriminatedUnion('type', [
  authorizationCreatedSchema,
  authorizationRevokedSchema,
  authorizationExpiredSchema,
  authorizationKeyRotatedSchema,
  authorizationKeyClaimedSchema,
  authorizationJoinedAccountSchema,
  recipientAccountCreatedSchema,
  recipientAccountKeyRotatedSchema,
  authorizationPreviousKeyRevokedSchema,
  recipientAccountKeyRevokedSchema,
  authorizationAlertedSchema,
  accessReviewCreatedSchema,
  accessReviewItemDecidedSchema,
  accessReviewCompletedSchema,
  accessReviewDueSoonSchema,
  organizationOffboardedSchema,
  recipientErasedSchema,
]);
export const domainEventSchema = z.discriminatedUnion('type', [...authorizationEventSchema.options, scoreCalculatedSchema]);

export type AuthorizationCreated = z.infer<typeof authorizationCreatedSchema>;
export type AuthorizationRevoked = z.infer<typeof authorizationRevokedSchema>;
export type AuthorizationExpired = z.infer<typeof authorizationExpiredSchema>;
export type AuthorizationKeyRotated = z.infer<typeof authorizationKeyRotatedSchema>;
export type AuthorizationKeyClaimed = z.infer<typeof authorizationKeyClaimedSchema>;
export type AuthorizationJoinedAccount = z.infer<typeof authorizationJoinedAccountSchema>;
export type RecipientAccountCreated = z.infer<typeof recipientAccountCreatedSchema>;
export type RecipientAccountKeyRotated = z.infer<typeof recipientAccountKeyRotatedSchema>;
export type AuthorizationPreviousKeyRevoked = z.infer<typeof authorizationPreviousKeyRevokedSchema>;
export type RecipientAccountKeyRevoked = z.infer<typeof recipientAccountKeyRevokedSchema>;
export type AuthorizationAlerted = z.infer<typeof authorizationAlertedSchema>;
export type OrganizationOffboarded = z.infer<typeof organizationOffboardedSchema>;
export type RecipientErased = z.infer<typeof recipientErasedSchema>;
export type ScoreCalculated = z.infer<typeof scoreCalculatedSchema>;
export type AccessReviewCreated = z.infer<typeof accessReviewCreatedSchema>;
export type AccessReviewItemDecided = z.infer<typeof accessReviewItemDecidedSchema>;
export type AccessReviewCompleted = z.infer<typeof accessReviewCompletedSchema>;
export type AccessReviewDueSoon = z.infer<typeof accessReviewDueSoonSchema>;
/** The events of an access review (decision 54), keyed by the review. */
export type AccessReviewEvent = AccessReviewCreated | AccessReviewItemDecided | AccessReviewCompleted | AccessReviewDueSoon;
export type AuthorizationEvent = z.infer<typeof authorizationEventSchema>;
export type DomainEvent = z.infer<typeof domainEventSchema>;

/**
 * Records are keyed so that each key's events stay in order: Client ID for authorizations, account
 * for recipient accounts, organization for scores.
 */
export function partitionKeyOf(event: DomainEvent): string {
  return subjectOf(event.data);
}

function subjectOf(data: DomainEvent['data']): string {
  // An access review's events (its items name grants) stay in order by the review.
  if ('reviewId' in data) return data.reviewId;
  if ('clientId' in data) return data.clientId;
  if ('accountId' in data) return data.accountId;
  return data.organizationId;
}

export function topicOf(event: DomainEvent): string {
  return event.type === EVENT_TYPES.scoreCalculated ? TOPICS.scores : TOPICS.authorizations;
}

/** The envelope's fixed fields, so producers only state what differs. */
export function newEvent<E extends DomainEvent>(fields: { id: string; source: string; time: Date } & Pick<E, 'type' | 'data'>): E {
  const { id, source, time, type, data } = fields;
  const subject = subjectOf(data);
  return {
    specversion: '1.0',
    id,
    source,
    type,
    subject,
    time: time.toISOString(),
    datacontenttype: 'application/json',
    data,
  } as E;
}
