import {
  EVENT_TYPES,
  WEBHOOK_CHANGED_EVENT_TYPE,
  webhookChangedSchema,
  type AuditAction,
  type AuditActor,
  type AuditRecord,
  type AuditStamp,
  type AuthorizationEvent,
  type WebhookChanged,
} from '@rsd/contracts';
import { webhookOwnerKey } from '../webhooks/webhook-owner';

/** Who asks for a change (decision 54): the actor, the request and the caller's address, as the service determined them. */
export interface Origin {
  actor: AuditActor;
  requestId: string | null;
  address: string | null;
}

/** The expiry scheduler acts on no request. */
export const SYSTEM_ORIGIN: Origin = { actor: { type: 'system', id: 'expiry-scheduler', via: null }, requestId: null, address: null };

/**
 * The action an event records, `<resource>.<verb>`; undefined for an event that records no one's
 * change (an alert). A grant joining an account is a claim, unless the command says it answered an offer.
 */
export function auditActionOf(event: AuthorizationEvent): AuditAction | undefined {
  switch (event.type) {
    case EVENT_TYPES.authorizationCreated:
      return 'authorization.created';
    case EVENT_TYPES.authorizationRevoked:
      if (event.data.revocationReason === 'released_by_recipient') return 'authorization.released';
      if (event.data.revocationReason === 'declined_by_recipient') return 'authorization.offer_declined';
      return 'authorization.revoked';
    case EVENT_TYPES.authorizationExpired:
      return 'authorization.expired';
    case EVENT_TYPES.authorizationKeyRotated:
      return 'authorization.key_rotated';
    case EVENT_TYPES.authorizationKeyClaimed:
      return 'authorization.key_claimed';
    case EVENT_TYPES.authorizationJoinedAccount:
      return 'authorization.claimed_into_account';
    case EVENT_TYPES.authorizationPreviousKeyRevoked:
      return 'authorization.previous_key_revoked';
    case EVENT_TYPES.recipientAccountCreated:
      return 'recipient_account.created';
    case EVENT_TYPES.recipientAccountKeyRotated:
      return 'recipient_account.key_rotated';
    case EVENT_TYPES.recipientAccountKeyRevoked:
      return 'recipient_account.key_revoked';
    case EVENT_TYPES.accessReviewCreated:
      return 'access_review.created';
    case EVENT_TYPES.accessReviewItemDecided:
      return 'access_review.item_decided';
    case EVENT_TYPES.accessReviewCompleted:
      return 'access_review.completed';
    // Decision 56's offboarding and erasure carry no one's identity; an offboarding purges the trail it would join.
    case EVENT_TYPES.authorizationAlerted:
    case EVENT_TYPES.accessReviewDueSoon:
    case EVENT_TYPES.organizationOffboarded:
    case EVENT_TYPES.recipientErased:
      return undefined;
  }
}

/**
 * The event with who made its change written into its data; an event that records no change (an
 * alert) is returned as it is. `action` overrides what the event alone says (an offer accepted).
 */
export function withAudit<E extends AuthorizationEvent>(event: E, origin: Origin, action?: AuditAction): E {
  const named = action ?? auditActionOf(event);
  if (!named || event.type === EVENT_TYPES.authorizationAlerted || event.type === EVENT_TYPES.accessReviewDueSoon) return event;
  const audit: AuditStamp = { action: named, actor: origin.actor, requestId: origin.requestId, address: origin.address };
  return { ...event, data: { ...event.data, audit } };
}

/**
 * The audit view's entry for an event: one that carries an audit stamp and belongs to an organization
 * (a recipient account's own changes belong to no organization's trail).
 */
export function auditRecordOf(event: AuthorizationEvent): AuditRecord | undefined {
  const data = event.data;
  if (!('audit' in data) || !data.audit || !('organizationId' in data)) return undefined;
  const { action, actor, requestId, address } = data.audit;
  return {
    eventId: event.id,
    organizationId: data.organizationId,
    at: event.time,
    action,
    actor: { ...actor },
    requestId,
    address,
    clientId: 'clientId' in data ? data.clientId : null,
  };
}

/** What the notifier does to a webhook that the audit trail records (a test or a redelivery changes nothing). */
export type WebhookChange = 'created' | 'updated' | 'deleted' | 'secret_rotated';

/**
 * The action of a change to a webhook: an organization's own webhook is its subscription to its alerts
 * (`alert_subscription.…`); a grant's is a recipient's webhook on one of the organization's grants (`webhook.…`).
 */
export function webhookAuditAction(owner: 'grant' | 'organization', change: WebhookChange): AuditAction {
  return owner === 'organization' ? `alert_subscription.${change}` : `webhook.${change}`;
}

/** The notifier's event of a change to a webhook: its id and owner, who asked, never its URL or secret. */
export function webhookChanged(
  fields: { organizationId: string; clientId: string | null; webhookId: string; action: AuditAction; origin: Origin },
  stamp: { id: string; time: Date },
): WebhookChanged {
  const { organizationId, clientId, webhookId, action, origin } = fields;
  return webhookChangedSchema.parse({
    specversion: '1.0',
    id: stamp.id,
    source: '/notifier',
    type: WEBHOOK_CHANGED_EVENT_TYPE,
    subject: webhookId,
    time: stamp.time.toISOString(),
    datacontenttype: 'application/json',
    data: { organizationId, clientId, webhookId, audit: { action, ...origin } },
  });
}

/** The notifier, disabling a webhook whose deliveries kept failing for 24 h (decision 45's lifecycle): the system, on no request. */
export const DELIVERY_FAILURES_ORIGIN: Origin = {
  actor: { type: 'system', id: 'delivery-failures', via: null },
  requestId: null,
  address: null,
};

const ACCOUNT_OWNER_PREFIX = webhookOwnerKey({ kind: 'portfolio', accountId: '' });
const ORGANIZATION_OWNER_PREFIX = webhookOwnerKey({ kind: 'organization', organizationId: '' });

/**
 * The notifier's event of a webhook it disabled after its deliveries kept failing: `webhook.disabled`
 * by the system, for a recipient's webhook on one of the organization's grants (its `clientId`) and
 * for the organization's own alert subscription (no `clientId`) alike, the one action the trail has
 * for a disabling. Undefined for a recipient account's webhook, which is in no organization's trail.
 */
export function webhookDisabledForFailures(
  webhook: { id: string; ownerKey: string; organizationId: string },
  stamp: { id: string; time: Date },
): WebhookChanged | undefined {
  if (webhook.ownerKey.startsWith(ACCOUNT_OWNER_PREFIX) || webhook.organizationId === '') return undefined;
  const clientId = webhook.ownerKey.startsWith(ORGANIZATION_OWNER_PREFIX) ? null : webhook.ownerKey;
  return webhookChanged(
    {
      organizationId: webhook.organizationId,
      clientId,
      webhookId: webhook.id,
      action: 'webhook.disabled',
      origin: DELIVERY_FAILURES_ORIGIN,
    },
    stamp,
  );
}

/** The audit view's entry for the notifier's event. */
export function auditRecordOfWebhookChange(event: WebhookChanged): AuditRecord {
  const { organizationId, clientId, audit } = event.data;
  return {
    eventId: event.id,
    organizationId,
    at: event.time,
    action: audit.action,
    actor: { ...audit.actor },
    requestId: audit.requestId,
    address: audit.address,
    clientId,
  };
}
