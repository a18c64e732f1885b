import {
  ALERT_TYPES,
  EVENT_TYPES,
  type AccessReviewAlertData,
  type AlertData,
  type AlertType,
  type AuthorizationEndReason,
  type AuthorizationExpired,
  type AuthorizationRevoked,
  type CalculatedScore,
  type DomainEvent,
  type Scope,
  type ScoreUpdatedData,
  type WebhookConditions,
  type WebhookEventType,
  type WebhookPayload,
  type WebhookPayloadType,
  type WebhookStatus,
} from '@rsd/contracts';
import { PILLAR_NAMES } from '../history/explain-history';
import type { RecipientAccountView } from '../views/account-views';
import { credentialView, isActive, type CredentialView } from '../views/credential-view';
import { latestScoreView } from '../views/latest-score-view';
import { consumeEvents, unhandled, type EventConsumers } from '../views/view';
import { conditionsHold } from './webhook-conditions';

/**
 * Decision 27: what the notifier sends, decided without I/O. An event first becomes a trigger (the
 * organization's latest score moved, or an authorization ended), then each subscription gets the
 * deliveries its events and its authorization's scopes allow.
 */
export type NotifierTrigger =
  | {
      kind: 'latest-score-changed';
      eventId: string;
      occurredAt: string;
      organizationId: string;
      previous: CalculatedScore | undefined;
      latest: CalculatedScore;
    }
  | {
      kind: 'authorization-ended';
      eventId: string;
      occurredAt: string;
      clientId: string;
      reason: AuthorizationEndReason;
      endedAt: string;
    };

/** What the notifier's own views held before the event: whichever one the event's key names. */
export interface NotifierStateBefore {
  /** For a score event: the organization's latest score. */
  latestScore?: CalculatedScore;
  /** For an authorization event: the authorization's credential. */
  credential?: CredentialView;
  /** For a recipient account's event: the account, with its keys' digests. */
  account?: RecipientAccountView;
}

/** The event types that may make a trigger, each with the trigger it makes (or none). */
export const TRIGGERS_BY_EVENT = {
  [EVENT_TYPES.scoreCalculated]: (event, before) => {
    const latest = latestScoreView.evolve(before.latestScore, event);
    if (latest === undefined || latest === before.latestScore) return undefined;
    const { organizationId } = latest;
    return {
      kind: 'latest-score-changed',
      eventId: event.id,
      occurredAt: event.time,
      organizationId,
      previous: before.latestScore,
      latest,
    };
  },
  [EVENT_TYPES.authorizationRevoked]: (event, before) => endedBy(event, before.credential, 'revoked', event.data.revokedAt),
  [EVENT_TYPES.authorizationExpired]: (event, before) => endedBy(event, before.credential, 'expired', event.data.expiredAt),
} satisfies Partial<EventConsumers<[before: NotifierStateBefore], NotifierTrigger | undefined>>;

/**
 * The trigger an event makes, or undefined. The views' own rules decide: the latest score changed
 * when `latestScoreView` would replace it (decision 2: a late older score or a duplicate does not),
 * and an authorization ended when `credentialView` moves it from active to revoked or expired, which
 * happens once whatever duplicates, replays or a revoke after an expiry follow.
 */
export const triggerOf = consumeEvents<[before: NotifierStateBefore], NotifierTrigger | undefined>(TRIGGERS_BY_EVENT, undefined);

/** Decision 44: an organization's alert, for its alert webhooks. */
export interface AlertTrigger {
  eventId: string;
  occurredAt: string;
  organizationId: string;
  type: AlertType;
  /** A grant's alert names the grant; an access review's (decision 54) names the review. */
  data: AlertData | AccessReviewAlertData;
  /** Decision 50, for `authorization.key_leaked`: how many of the grant's webhooks the leak disabled. */
  webhooksDisabled?: number;
}

/** What the notifier did for the event before planning its alert (decision 50). */
export interface AlertFacts {
  /** The grant's webhooks that a leak of its key disabled (counted again the same on a replay). */
  webhooksDisabled: number;
}

/**
 * The alert an event is, or undefined: an `AuthorizationAlerted` as it says, and a revocation for a
 * leaked key or by the recipient's release when it ends an active grant (once, as `triggerOf`
 * decides for `authorization.ended`). A leaked key's alert says how many webhooks it disabled.
 */
export function alertTriggerOf(
  event: DomainEvent,
  before: NotifierStateBefore,
  facts: AlertFacts = { webhooksDisabled: 0 },
): AlertTrigger | undefined {
  const trigger = alertOf(event, before);
  return trigger?.type === 'authorization.key_leaked' ? { ...trigger, webhooksDisabled: facts.webhooksDisabled } : trigger;
}

/** The event types that may make an organization's alert (`alertTriggerOf`), each with the alert it makes (or none). */
export const ALERTS_BY_EVENT = {
  [EVENT_TYPES.authorizationAlerted]: (event) => {
    const { clientId, organizationId, alert, address, failures, expiresAt } = event.data;
    const data: AlertData = {
      clientId,
      ...(address ? { address } : {}),
      ...(failures ? { failures } : {}),
      ...(expiresAt ? { expiresAt } : {}),
    };
    return { eventId: event.id, occurredAt: event.time, organizationId, type: alert, data };
  },
  [EVENT_TYPES.authorizationRevoked]: (event, before) => {
    const reason = event.data.revocationReason;
    const type =
      reason === 'key_leaked' ? 'authorization.key_leaked' : reason === 'released_by_recipient' ? 'authorization.released' : undefined;
    if (!type || !endedBy(event, before.credential, 'revoked', event.data.revokedAt)) return undefined;
    const { clientId, organizationId } = event.data;
    return { eventId: event.id, occurredAt: event.time, organizationId, type, data: { clientId } };
  },
  // Decision 54: an access review's alerts, once each (the review's events are each written once).
  [EVENT_TYPES.accessReviewDueSoon]: (event) => {
    const { reviewId, organizationId, dueAt, pending } = event.data;
    return {
      eventId: event.id,
      occurredAt: event.time,
      organizationId,
      type: 'access_review.due_soon',
      data: { reviewId, dueAt, pending },
    };
  },
  [EVENT_TYPES.accessReviewCompleted]: (event) => {
    const { reviewId, organizationId, completedAt, kept, revoked } = event.data;
    return {
      eventId: event.id,
      occurredAt: event.time,
      organizationId,
      type: 'access_review.completed',
      data: { reviewId, completedAt, kept, revoked },
    };
  },
} satisfies Partial<EventConsumers<[before: NotifierStateBefore], AlertTrigger | undefined>>;

const alertOf = consumeEvents<[before: NotifierStateBefore], AlertTrigger | undefined>(ALERTS_BY_EVENT, undefined);

/** An organization's alert webhook gets the alert when it is active and subscribed to its type. */
export function alertDeliveriesFor(
  trigger: AlertTrigger,
  subscription: Pick<SubscriptionFacts, 'id' | 'events' | 'status'>,
): PlannedDelivery[] {
  if (subscription.status !== 'active' || !subscription.events.includes(trigger.type)) return [];
  const { type, occurredAt: timestamp, data } = trigger;
  // ALERTS_BY_EVENT pairs each type with its own data (a grant's, or a review's): the union cannot say so.
  const payload = (
    type === 'authorization.key_leaked'
      ? { type, timestamp, data: { ...data, webhooksDisabled: trigger.webhooksDisabled ?? 0 } }
      : { type, timestamp, data }
  ) as WebhookPayload;
  return [{ subscriptionId: subscription.id, key: `${subscription.id}:${trigger.eventId}:${trigger.type}`, payload }];
}

function endedBy(
  event: AuthorizationRevoked | AuthorizationExpired,
  before: CredentialView | undefined,
  reason: AuthorizationEndReason,
  endedAt: string,
): NotifierTrigger | undefined {
  if (before?.status !== 'active') return undefined;
  const after = credentialView.evolve(before, event);
  if (after === before || after?.status === 'active') return undefined;
  return { kind: 'authorization-ended', eventId: event.id, occurredAt: event.time, clientId: event.data.clientId, reason, endedAt };
}

/** One subscription as the notifier holds it, with its authorization's credential as the notifier knows it now. */
export interface SubscriptionFacts {
  id: string;
  events: readonly WebhookEventType[];
  status: WebhookStatus;
  /** Decision 45: which score changes it hears of (`score.updated` only). */
  conditions?: WebhookConditions | undefined;
  authorization: CredentialView;
  /**
   * Decision 42: a portfolio's webhook hears of every grant its account holds, so one event may give
   * it a delivery per grant: the grant's Client ID then joins the delivery's key.
   */
  perGrant?: boolean;
}

export interface PlannedDelivery {
  subscriptionId: string;
  /**
   * The same for the same source event, subscription and type: a store that keeps it unique makes
   * processing an event twice (a crash before the position was saved) harmless.
   */
  key: string;
  payload: WebhookPayload;
}

/**
 * The deliveries one trigger makes for one subscription: none for a disabled subscription, none of a
 * score for an authorization that is no longer active at `now` (its `authorization.ended` is the last
 * thing it gets), and only what its events and scopes allow.
 */
export function deliveriesFor(trigger: NotifierTrigger, subscription: SubscriptionFacts, now: Date): PlannedDelivery[] {
  if (subscription.status !== 'active') return [];
  const { authorization } = subscription;
  const wants = (type: WebhookEventType) => subscription.events.includes(type) && scopesAllow(type, authorization.scopes);
  const delivery = (payload: WebhookPayload): PlannedDelivery => ({
    subscriptionId: subscription.id,
    key: `${subscription.id}:${trigger.eventId}:${payload.type}${subscription.perGrant ? `:${authorization.clientId}` : ''}`,
    payload,
  });

  switch (trigger.kind) {
    case 'latest-score-changed': {
      if (authorization.organizationId !== trigger.organizationId || !isActive(authorization, now)) return [];
      const { previous, latest } = trigger;
      const { clientId } = authorization;
      const deliveries: PlannedDelivery[] = [];
      if (wants('score.updated')) {
        const data = scoreUpdatedData(latest, authorization);
        // A recalculation that changes nothing this recipient may see is not news to it.
        const news = !previous || !sameScoreData(data, scoreUpdatedData(previous, authorization));
        if (news && conditionsHold(subscription.conditions, previous, latest)) {
          deliveries.push(delivery({ type: 'score.updated', timestamp: trigger.occurredAt, data }));
        }
      }
      if (wants('grade.changed') && previous && previous.grade !== latest.grade) {
        const data = { clientId, scoreDate: latest.scoreDate, from: previous.grade, to: latest.grade };
        deliveries.push(delivery({ type: 'grade.changed', timestamp: trigger.occurredAt, data }));
      }
      return deliveries;
    }
    case 'authorization-ended': {
      if (authorization.clientId !== trigger.clientId || !wants('authorization.ended')) return [];
      const { clientId, reason, endedAt } = trigger;
      return [delivery({ type: 'authorization.ended', timestamp: trigger.occurredAt, data: { clientId, reason, endedAt } })];
    }
    default:
      return unhandled(trigger);
  }
}

/**
 * Whether an authorization's scopes let it receive an event type at all, so the service can refuse a
 * subscription that would never receive anything. `score.updated` carries the score resource
 * (`qr_score`); `grade.changed` carries grades, which `qr_score` and the history of `score_trend`
 * both show; `authorization.ended` is about the recipient itself.
 */
export function scopesAllow(type: WebhookEventType, scopes: readonly Scope[]): boolean {
  // An organization's alerts are never a recipient's.
  if (isAlertType(type)) return false;
  switch (type) {
    case 'score.updated':
      return scopes.includes('qr_score');
    case 'grade.changed':
      return scopes.includes('qr_score') || scopes.includes('score_trend');
    case 'authorization.ended':
      return true;
    default:
      return unhandled(type);
  }
}

/**
 * Before each retry: a score or grade still pending when its authorization ends is dropped, so
 * nothing reaches a recipient after its access ended; `authorization.ended` itself is retried, and so
 * is a test delivery, which carries nothing of the organization's.
 */
export function stillDeliverable(type: WebhookPayloadType, authorization: CredentialView, now: Date): boolean {
  // An alert is the organization's own, whatever became of the grant.
  if (isAlertType(type)) return true;
  switch (type) {
    case 'score.updated':
    case 'grade.changed':
      return isActive(authorization, now) && scopesAllow(type, authorization.scopes);
    case 'authorization.ended':
    case 'webhook.test':
      return true;
    default:
      return unhandled(type);
  }
}

/**
 * A delivery that carries no grant's data, so no grant bounds it: a test delivery, and an access
 * review's alerts (decision 54), which name the review and go to the organization itself.
 */
export function deliverableWithoutGrant(type: WebhookPayloadType): boolean {
  return type === 'webhook.test' || type === 'access_review.due_soon' || type === 'access_review.completed';
}

/** An organization's alert (decision 44), as opposed to what a recipient's webhook hears. */
function isAlertType(type: string): type is AlertType {
  return (ALERT_TYPES as readonly string[]).includes(type);
}

function scoreUpdatedData(score: CalculatedScore, authorization: CredentialView): ScoreUpdatedData {
  const data: ScoreUpdatedData = { clientId: authorization.clientId, scoreDate: score.scoreDate, score: score.score, grade: score.grade };
  if (authorization.scopes.includes('pillar_breakdown')) data.pillarScores = { ...score.pillarScores };
  return data;
}

function sameScoreData(a: ScoreUpdatedData, b: ScoreUpdatedData): boolean {
  if (a.scoreDate !== b.scoreDate || a.score !== b.score || a.grade !== b.grade) return false;
  if (!a.pillarScores || !b.pillarScores) return a.pillarScores === b.pillarScores;
  return PILLAR_NAMES.every((name) => a.pillarScores?.[name] === b.pillarScores?.[name]);
}
