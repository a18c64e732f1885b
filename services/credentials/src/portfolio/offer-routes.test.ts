import { EVENT_TYPES, TOPICS } from '@rsd/contracts';
import type { EventLog } from '@rsd/ports';
import { request, signToken, valuesOn } from '@rsd/testkit';
import { startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';

const ORG = 'acme';

/** The event log, unless `down.now`: then every append is refused, as when Kafka is out of reach. */
function switchable(down: { now: boolean }) {
  return (log: EventLog): EventLog => ({
    append: (topic, records) => (down.now ? Promise.reject(new Error('event log down')) : log.append(topic, records)),
    subscribe: (options) => log.subscribe(options),
    close: () => log.close(),
  });
}

async function eventsIn(eventLog: EventLog): Promise<{ type: string; data: Record<string, unknown> }[]> {
  return (await valuesOn(eventLog, TOPICS.authorizations)).map(
    (value) => JSON.parse(value) as { type: string; data: Record<string, unknown> },
  );
}

describe('credentials service: offers to a recipient account and the event log (decision 50)', () => {
  const down = { now: false };
  let h: CredentialsHarness;
  let bearer: Record<string, string>;

  beforeEach(async () => {
    down.now = false;
    h = await startCredentials({ wrapEventLog: switchable(down) });
    bearer = { authorization: `Bearer ${await signToken({ org: ORG, scope: 'authorizations:write', sub: 'admin@acme' })}` };
  });
  afterEach(() => h.close());

  const json = { 'content-type': 'application/json' };
  const create = (body: object) =>
    request(`${h.app.baseUrl}/v1/organizations/${ORG}/authorizations`, {
      method: 'POST',
      headers: { ...bearer, ...json },
      body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], ...body }),
    });

  /** An account opened by claiming a link of ORG into a new account; answers its id and key. */
  async function anAccount(): Promise<{ accountId: string; accountKey: string }> {
    const linked = await create({ keyDelivery: 'claimLink' });
    const opened = await request(linked.body.claim.url, { method: 'POST', headers: json, body: JSON.stringify({ into: 'account' }) });
    expect(opened.status).toBe(201);
    return opened.body;
  }

  const answer = (accountKey: string, clientId: string, what: 'accept' | 'decline') =>
    request(`${h.app.baseUrl}/v1/portfolio/offers/${clientId}/${what}`, { method: 'POST', headers: { 'x-api-key': accountKey } });

  test('when an offer is made, then its Created event names no account, and an acceptance emits the JoinedAccount a claim into the account emits', async () => {
    const account = await anAccount();
    const offered = await create({ keyDelivery: 'account', recipientAccountId: account.accountId });

    const accepted = await answer(account.accountKey, offered.body.clientId, 'accept');

    expect(accepted.status).toBe(200);
    const events = (await eventsIn(h.eventLog)).filter((event) => event.data.clientId === offered.body.clientId);
    expect(events.map((event) => event.type)).toEqual([EVENT_TYPES.authorizationCreated, EVENT_TYPES.authorizationJoinedAccount]);
    expect(events[0]?.data).toMatchObject({ keyDigest: null, recipientAccountId: null });
    expect(events[1]?.data).toMatchObject({ recipientAccountId: account.accountId, organizationId: ORG, revision: 2 });
    expect(await h.store.pendingOutbox(10)).toEqual([]);
  });

  test('when the event log refuses an acceptance, then it answers 202 with enforcement pending, and once the log is back the same acceptance answers 200 with one JoinedAccount in the log', async () => {
    const account = await anAccount();
    const offered = await create({ keyDelivery: 'account', recipientAccountId: account.accountId });
    down.now = true;

    const pending = await answer(account.accountKey, offered.body.clientId, 'accept');

    expect(pending).toMatchObject({ status: 202, body: { clientId: offered.body.clientId, enforcement: 'pending' } });
    expect(pending.headers.get('cache-control')).toBe('no-store');
    down.now = false;
    const enforced = await answer(account.accountKey, offered.body.clientId, 'accept');
    expect(enforced.status).toBe(200);
    expect(enforced.body).not.toHaveProperty('enforcement');
    const events = (await eventsIn(h.eventLog)).filter((event) => event.data.clientId === offered.body.clientId);
    expect(events.map((event) => event.type)).toEqual([EVENT_TYPES.authorizationCreated, EVENT_TYPES.authorizationJoinedAccount]);
  });

  test('when the event log refuses a decline, then it answers 202 with enforcement pending, then 204 with one Revoked event of reason declined_by_recipient', async () => {
    const account = await anAccount();
    const offered = await create({ keyDelivery: 'account', recipientAccountId: account.accountId });
    down.now = true;

    expect(await answer(account.accountKey, offered.body.clientId, 'decline')).toMatchObject({
      status: 202,
      body: { enforcement: 'pending' },
    });
    down.now = false;
    expect((await answer(account.accountKey, offered.body.clientId, 'decline')).status).toBe(204);

    const revoked = (await eventsIn(h.eventLog)).filter((event) => event.type === EVENT_TYPES.authorizationRevoked);
    expect(revoked.map((event) => [event.data.clientId, event.data.revocationReason])).toEqual([
      [offered.body.clientId, 'declined_by_recipient'],
    ]);
  });

  test('when an account trusts the organization, then its offer is created held by the account, in one Created event, and the answer still names no account', async () => {
    const account = await anAccount();
    const before = (await eventsIn(h.eventLog)).length;
    const trusted = await request(`${h.app.baseUrl}/v1/portfolio/auto-accept`, {
      method: 'PUT',
      headers: { 'x-api-key': account.accountKey, ...json },
      body: JSON.stringify({ organizationIds: [ORG] }),
    });
    expect(trusted).toMatchObject({ status: 200, body: { organizationIds: [ORG] } });
    // No event for the list itself: only this service acts on it.
    expect(await eventsIn(h.eventLog)).toHaveLength(before);

    const offered = await create({ keyDelivery: 'account', recipientAccountId: account.accountId });

    expect(offered.body).toMatchObject({ status: 'active', recipientAccountId: account.accountId, recipientAccountName: null });
    const events = (await eventsIn(h.eventLog)).filter((event) => event.data.clientId === offered.body.clientId);
    expect(events.map((event) => [event.type, event.data.recipientAccountId])).toEqual([
      [EVENT_TYPES.authorizationCreated, account.accountId],
    ]);
  });
});
