import { EVENT_TYPES } from '@rsd/contracts';
import * as domain from '../index';
import { ALERTS_BY_EVENT, TRIGGERS_BY_EVENT } from '../webhooks/notifications';
import { KEY_CUT_OFFS_BY_EVENT } from '../webhooks/key-cut-offs';
import { PURGES_BY_EVENT } from '../erasure/erasure';
import type { EventType, ViewDefinition } from './view';

// Views name the events they handle and pass by the rest, so nothing makes a view list every event
// type: a new event type that nothing handles would be dropped in silence. Every event type must be
// heard somewhere: by a view, or by one of the notifier's decisions (the only other consumers of the
// event log). Those no view needs are listed with why.

/** Every view the domain exports, found by its shape, so that a new view counts without being listed here. */
const VIEWS = (Object.values(domain) as unknown[]).filter(
  (value): value is ViewDefinition<unknown> =>
    typeof value === 'object' && value !== null && 'on' in value && 'evolve' in value && 'versionOf' in value && 'name' in value,
);

/** The notifier's decisions made from events: what it sends to recipients, what it alerts organizations of, which keys it cuts off. */
const CONSUMERS: Record<string, object> = {
  'notifier triggers': TRIGGERS_BY_EVENT,
  'organization alerts': ALERTS_BY_EVENT,
  'key cut-offs': KEY_CUT_OFFS_BY_EVENT,
  // Decision 56: every service's purge of an offboarded organization (libs/consumers' purgeOffboarded).
  'offboarding purges': PURGES_BY_EVENT,
};

/** Event types that no view is made of, and why. */
const NO_VIEW_NEEDS: Partial<Record<EventType, string>> = {
  [EVENT_TYPES.authorizationAlerted]:
    'an alert changes no credential, score, account or grant a view serves; only the notifier hears it ' +
    "(the organization's alert webhooks, and a leaked key's cut-off)",
  [EVENT_TYPES.organizationOffboarded]:
    "an offboarding evolves no document: every service removes the organization's documents and rows (a purge), whatever view holds them",
};

const handlersOf = (type: EventType) => ({
  views: VIEWS.filter((view) => view.on[type] !== undefined).map((view) => view.name),
  consumers: Object.entries(CONSUMERS)
    .filter(([, handlers]) => Object.hasOwn(handlers, type))
    .map(([name]) => name),
});

describe('every event type is handled somewhere', () => {
  test('the views are found', () => {
    expect(VIEWS.map((view) => view.name)).toEqual(expect.arrayContaining(domain.READ_VIEWS.map((view) => view.name)));
  });

  test.each(Object.values(EVENT_TYPES))('%s has a handler in a view or a consumer', (type) => {
    const { views, consumers } = handlersOf(type);
    expect([...views, ...consumers]).not.toEqual([]);
  });

  test.each(Object.values(EVENT_TYPES))('%s is in a view unless listed as needed by none', (type) => {
    const { views } = handlersOf(type);
    if (NO_VIEW_NEEDS[type] === undefined) expect(views).not.toEqual([]);
    else expect(views).toEqual([]);
  });
});
