import { z } from 'zod';
import { clientIdSchema, utcInstantSchema } from './ids';
import { newestFirstPageSchema } from './pages';

/*
 * Decision 54's audit trail: who changed an organization's grants (and the accounts holding them, its
 * webhooks and alert subscriptions), from where, in which request. Kept with the events that make the
 * change (the event log is the record) and served from a view the events keep current.
 */

/** `person` and `service` hold a token; `recipient` a grant or account key; `system` is the expiry scheduler; `reporter` a leak report. */
export const ACTOR_TYPES = ['person', 'service', 'recipient', 'system', 'reporter'] as const;
export const actorTypeSchema = z.enum(ACTOR_TYPES).meta({ id: 'ActorType' });
export type ActorType = z.infer<typeof actorTypeSchema>;

/** How the change was asked for: the console, the CLI, an SDK, or the API directly. */
export const ACTOR_VIAS = ['api', 'console', 'cli', 'sdk'] as const;
export const actorViaSchema = z.enum(ACTOR_VIAS).meta({ id: 'ActorVia' });
export type ActorVia = z.infer<typeof actorViaSchema>;

/**
 * The actor. `id`: `<issuer>|<subject>` for a token's holder (the issuer empty when the service verifies
 * tokens without one), the Client ID or account id for a recipient, `expiry-scheduler` for the system,
 * `secret-scanning` for a leak report. Never a key or a token. `via` is null for the system, which
 * acts on no request.
 */
export const auditActorSchema = z
  .object({
    type: actorTypeSchema,
    id: z.string().min(1).max(512),
    via: actorViaSchema.nullable(),
  })
  .meta({ id: 'AuditActor' });
export type AuditActor = z.infer<typeof auditActorSchema>;

/** The actions an audit entry names, `<resource>.<verb>` (docs/decisions/0054-audit-trail-and-access-reviews.md lists them). */
export const AUDIT_ACTIONS = [
  'authorization.created',
  'authorization.revoked',
  'authorization.key_rotated',
  'authorization.key_claimed',
  'authorization.claimed_into_account',
  'authorization.expired',
  'authorization.released',
  'authorization.offer_accepted',
  'authorization.offer_declined',
  'authorization.previous_key_revoked',
  'recipient_account.created',
  'recipient_account.key_rotated',
  'recipient_account.key_revoked',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.disabled',
  'alert_subscription.created',
  'alert_subscription.updated',
  'alert_subscription.deleted',
  'access_review.created',
  'access_review.item_decided',
  'access_review.completed',
  'alert_subscription.secret_rotated',
] as const;
export const auditActionSchema = z.enum(AUDIT_ACTIONS).meta({ id: 'AuditAction' });
export type AuditAction = z.infer<typeof auditActionSchema>;

const requestIdSchema = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/);

/** What a change's event carries of who made it: no key, token or secret, ever. */
export const auditStampSchema = z.object({
  action: auditActionSchema,
  actor: auditActorSchema,
  requestId: requestIdSchema.nullable(),
  address: z.string().max(64).nullable(),
});
export type AuditStamp = z.infer<typeof auditStampSchema>;

/** Spread into the data of every event that records a change: absent in events written before decision 54. */
export const auditShape = { audit: auditStampSchema.optional() };

export const AUDIT_LOG_LIMIT = { min: 1, max: 500, default: 100 } as const;

/** One entry of GET /v1/organizations/{organizationId}/audit-log. */
export const auditLogEntrySchema = z
  .object({
    at: utcInstantSchema.meta({ description: 'When the change was made' }),
    action: auditActionSchema,
    actor: auditActorSchema,
    requestId: requestIdSchema.nullable().meta({ description: 'The x-request-id of the request that made it; null for the system' }),
    address: z.string().max(64).nullable().meta({ description: "The caller's address as the service determined it; null for the system" }),
    clientId: clientIdSchema.nullable().meta({
      description:
        "The grant changed (an access review's item decided; for a webhook, the grant it is a recipient's webhook of); null for a change to an alert subscription or a review as a whole",
    }),
  })
  .meta({ id: 'AuditLogEntry' });
export type AuditLogEntry = z.infer<typeof auditLogEntrySchema>;

export const auditLogPageSchema = newestFirstPageSchema(auditLogEntrySchema, 'AuditLogPage');
export type AuditLogPage = z.infer<typeof auditLogPageSchema>;

/** What the audit view keeps: an entry, whose it is, and the id of the event it comes from (each event is kept once). */
export interface AuditRecord extends AuditLogEntry {
  eventId: string;
  organizationId: string;
}
