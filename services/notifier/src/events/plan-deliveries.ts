import { TOPICS, type DomainEvent, EVENT_TYPES } from '@rsd/contracts';
import {
  accountKeyView,
  ACTIVE_GRANTS,
  alertDeliveriesFor,
  alertTriggerOf,
  credentialView,
  deliveriesFor,
  generateClientId,
  hearsOf,
  latestScoreView,
  organizationPortfolioGrantView,
  recipientAccountView,
  triggerOf,
  webhookOwnerKey,
  type AlertFacts,
  type NotifierTrigger,
  type CredentialView,
  type NotifierStateBefore,
  type ViewDefinition,
} from '@rsd/domain';
import type { Logger } from '@rsd/platform';
import {
  type Clock,
  type EventLog,
  type PendingDelivery,
  type StoredWebhook,
  type Subscription,
  type ViewStore,
  type WebhookStore,
} from '@rsd/ports';
import { activeTraceContext, parseRecord, projectEvent, purgeOffboarded } from '@rsd/consumers';
import { applyKeyCutOff } from './key-cut-offs';

/**
 * The notifier's own views, built from the events with the domain's rules: who may subscribe (grants,
 * and recipient accounts by their keys), what changed, and which accounts hold a grant of an
 * organization (decision 42's portfolio webhooks).
 */
export const NOTIFIER_VIEWS: readonly ViewDefinition<unknown>[] = [
  credentialView,
  latestScoreView,
  recipientAccountView,
  accountKeyView,
  organizationPortfolioGrantView,
] as ViewDefinition<unknown>[];

/** The most grants of one organization held in portfolios that one score change is planned for. */
const MOST_PORTFOLIO_GRANTS = 100_000;

export interface NotifierProjectionDeps {
  eventLog: EventLog;
  views: ViewStore;
  store: WebhookStore;
  clock: Clock;
  log: Logger;
  groupId: string;
  /** Told when deliveries were queued, so the worker looks at once. */
  onQueued(): void;
}

/**
 * One more consumer of the event log (no other service changes to feed it). For each event, in
 * order: what the notifier's views held before it decides whether it is news (the domain's
 * `triggerOf`), the deliveries it makes are queued, and only then are the views moved on. Queued
 * first, a crash between the two replays the event on the same views and queues the same keys,
 * which the store ignores: nothing is lost and nothing is sent twice.
 */
export function startNotifierProjection(deps: NotifierProjectionDeps): Promise<Subscription> {
  const { eventLog, views, store, clock, log } = deps;
  return eventLog.subscribe({
    groupId: deps.groupId,
    topics: [TOPICS.authorizations, TOPICS.scores],
    fromBeginning: true,
    // A new key may subscribe at once (its Created event is here before the 201); a score's 202 does not wait for its webhooks.
    awaitedOn: [TOPICS.authorizations],
    handle: async (record) => {
      const parsed = parseRecord(record);
      // The read API dead-letters what cannot be used; the notifier only passes it by, as an erased organization's event (decision 56).
      if (!('event' in parsed)) {
        log.debug({ topic: record.topic, offset: record.offset, reason: 'reason' in parsed ? parsed.reason : 'erased' }, 'record skipped');
        return;
      }
      const { event } = parsed;
      const before = await stateBefore(views, event);
      // Decision 50: a key cut off takes its webhooks with it before anything more is planned for them.
      const cutOff = await applyKeyCutOff({ store, log }, event, before);
      const deliveries = await plan(event, before, { webhooksDisabled: cutOff.webhooksDisabled });
      if (deliveries.length > 0) {
        await store.enqueue(deliveries);
        deps.onQueued();
      }
      await projectEvent(views, NOTIFIER_VIEWS, event);
      await cutOff.again();
      // Decision 56: the organization's webhooks, alert subscriptions, queued bodies and attempts go, and its views.
      await purgeOffboarded([event], {
        eventLog,
        service: 'notifier',
        purge: async (organizationId) => {
          await store.purgeOrganization(organizationId);
          for (const view of NOTIFIER_VIEWS) await views.purgeOrganization(view, organizationId);
        },
        now: () => clock.now(),
      });
    },
  });

  /** Each webhook that hears of the trigger, with the grant whose data a delivery to it carries. */
  async function audience(trigger: NotifierTrigger, before: NotifierStateBefore): Promise<{ webhook: StoredWebhook; grant: string }[]> {
    if (trigger.kind === 'authorization-ended') {
      const grants = (await store.activeWebhooksOfClient(trigger.clientId)).map((webhook) => ({ webhook, grant: trigger.clientId }));
      // Decision 42: the portfolio that held the grant hears that it ended, too.
      const accountId = before.credential?.recipientAccountId;
      if (!accountId) return grants;
      const owner = webhookOwnerKey({ kind: 'portfolio', accountId });
      return [...grants, ...(await store.activeWebhooksOfClient(owner)).map((webhook) => ({ webhook, grant: trigger.clientId }))];
    }
    const grants = (await store.activeWebhooksOfOrganization(trigger.organizationId)).map((webhook) => ({
      webhook,
      grant: webhook.clientId,
    }));
    // Decision 42: every account holding a grant of this organization hears of it, once per grant.
    const held = await views.list(organizationPortfolioGrantView, trigger.organizationId, {
      atLeast: ACTIVE_GRANTS,
      limit: MOST_PORTFOLIO_GRANTS,
    });
    const portfolios: { webhook: StoredWebhook; grant: string }[] = [];
    for (const grant of held) {
      const owner = webhookOwnerKey({ kind: 'portfolio', accountId: grant.accountId });
      for (const webhook of await store.activeWebhooksOfClient(owner)) portfolios.push({ webhook, grant: grant.clientId });
    }
    return [...grants, ...portfolios];
  }

  /** When the event is planned, and the trace its deliveries' attempts continue (decision 39): once per event. */
  interface Planning {
    now: Date;
    trace: ReturnType<typeof activeTraceContext>;
  }

  async function plan(event: DomainEvent, before: NotifierStateBefore, facts: AlertFacts): Promise<PendingDelivery[]> {
    const planning: Planning = { now: clock.now(), trace: activeTraceContext() };
    return [...(await planForRecipients(event, before, planning)), ...(await planAlerts(event, before, facts, planning))];
  }

  /** Decision 44: an organization's alert, to each of its alert webhooks that hears of it (a leak's says how many webhooks it disabled). */
  async function planAlerts(
    event: DomainEvent,
    before: NotifierStateBefore,
    facts: AlertFacts,
    planning: Planning,
  ): Promise<PendingDelivery[]> {
    const trigger = alertTriggerOf(event, before, facts);
    if (!trigger) return [];
    const owner = webhookOwnerKey({ kind: 'organization', organizationId: trigger.organizationId });
    const planned: PendingDelivery[] = [];
    for (const webhook of await store.activeWebhooksOfClient(owner)) {
      if (!hearsOf(webhook, event.time)) continue;
      for (const delivery of alertDeliveriesFor(trigger, webhook)) planned.push(pending(webhook, delivery, planning));
    }
    return planned;
  }

  /** `grant`: the grant whose data it carries (its allow list bounds where it may go); none for an organization's alert. */
  function pending(
    webhook: StoredWebhook,
    delivery: { key: string; payload: { type: PendingDelivery['eventType'] } },
    { now, trace }: Planning,
    grant?: string,
  ): PendingDelivery {
    return {
      messageId: generateClientId('msg'),
      key: delivery.key,
      webhookId: webhook.id,
      clientId: webhook.clientId,
      eventType: delivery.payload.type,
      body: JSON.stringify(delivery.payload),
      ...(grant === undefined ? {} : { grantClientId: grant }),
      attempts: 0,
      firstAttemptAt: null,
      dueAt: now.toISOString(),
      // Its attempts continue the trace of this planning (decision 39), itself the event's.
      ...trace,
    };
  }

  async function planForRecipients(event: DomainEvent, before: NotifierStateBefore, planning: Planning): Promise<PendingDelivery[]> {
    const trigger = triggerOf(event, before);
    if (!trigger) return [];
    const planned: PendingDelivery[] = [];
    for (const { webhook, grant } of await audience(trigger, before)) {
      // A subscription hears of what happens after it was made (or re-enabled), not of a backlog the projection is still catching up on.
      if (!hearsOf(webhook, event.time)) continue;
      const authorization: CredentialView | undefined =
        trigger.kind === 'authorization-ended' ? before.credential : await views.get(credentialView, grant);
      if (!authorization) continue;
      const facts = {
        id: webhook.id,
        events: webhook.events,
        status: webhook.status,
        conditions: webhook.conditions,
        authorization,
        perGrant: webhook.clientId !== grant,
      };
      for (const delivery of deliveriesFor(trigger, facts, planning.now)) planned.push(pending(webhook, delivery, planning, grant));
    }
    return planned;
  }
}

/** Whichever document of the notifier's views the event concerns, as it was before the event. */
async function stateBefore(views: ViewStore, event: DomainEvent): Promise<NotifierStateBefore> {
  if (event.type === EVENT_TYPES.scoreCalculated) {
    const key = latestScoreView.keyOf(event);
    return { latestScore: key === undefined ? undefined : await views.get(latestScoreView, key) };
  }
  const key = credentialView.keyOf(event);
  if (key !== undefined) return { credential: await views.get(credentialView, key) };
  // A recipient account's event: its keys before it (decision 50's cut-offs).
  const accountId = recipientAccountView.keyOf(event);
  return { account: accountId === undefined ? undefined : await views.get(recipientAccountView, accountId) };
}
