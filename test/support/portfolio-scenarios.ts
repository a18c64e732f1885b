import { randomUUID } from 'node:crypto';
import { generateApiKey } from '@rsd/domain';
import { aScoreSubmission, request, type JsonResponse } from '@rsd/testkit';
import { eventually } from './embedded-process';
import { startSwitchableReceiver, verifiesWith, type Received } from './webhook-lifecycle';
import * as orgAdmin from './organization-admin';

/*
 * Decision 42's portfolios as a recipient and its organizations use them, over HTTP, on any runtime:
 * the embedded one (one read API) and the distributed one (two read-API replicas, each of which must
 * answer the same). Each scenario makes organizations and accounts of its own.
 */

export interface PortfolioTarget {
  credentials: string;
  scoreIngest: string;
  /** Every read-API replica: a read is checked on each. */
  readApis: string[];
  tokenFor(org: string): Promise<string>;
  /** The account limit the product was started with (ACCOUNT_RATE_LIMIT_PER_MINUTE). */
  accountLimitPerMinute: number;
}

/**
 * The account limit (ACCOUNT_RATE_LIMIT_PER_MINUTE) every runtime's suite starts the product with: low
 * enough that the limit's scenario reaches it in moments, high enough that no other scenario does.
 */
export const SCENARIO_ACCOUNT_LIMIT = 300;

/** For the portfolio's webhooks: a notifier that may deliver to `receiverHost` (WEBHOOK_ALLOW_PRIVATE_TARGETS). */
export interface PortfolioWebhookTarget extends PortfolioTarget {
  notifier: string;
  receiverHost: string;
}

interface Grant {
  clientId: string;
  organizationId: string;
}

interface Account {
  accountId: string;
  accountKey: string;
}

/** A page's items, as the API documents them. */
function itemsOf<Item>(page: JsonResponse): Item[] {
  return (page.body as { items: Item[] }).items;
}

function clientIdsOf(page: JsonResponse): string[] {
  return itemsOf<{ clientId: string }>(page).map((item) => item.clientId);
}

/** Every raw account key and claim token the scenarios made: the suites search their logs, stores and topics for them. */
export const portfolioSecrets: string[] = [];

/** The account's answer to an offer, on the credentials service at `credentials`. */
function answerOfferOn(credentials: string, account: Account, clientId: string, answer: 'accept' | 'decline'): Promise<JsonResponse> {
  return request(`${credentials}/v1/portfolio/offers/${clientId}/${answer}`, {
    method: 'POST',
    headers: { 'x-api-key': account.accountKey },
  });
}

export function portfolioScenarios(target: () => PortfolioTarget) {
  const t = () => target();
  const unique = (what: string) => `${what}-${randomUUID().slice(0, 8)}`;
  const bearer = async (org: string) => ({ authorization: `Bearer ${await t().tokenFor(org)}` });
  const json = { 'content-type': 'application/json', accept: 'application/json' };

  async function anOrganization(score: number, pillars = 60): Promise<string> {
    const org = unique('pf-org');
    const token = await t().tokenFor(org);
    await orgAdmin.postScore(
      t().scoreIngest,
      token,
      aScoreSubmission({
        organizationId: org,
        scoreDate: '2026-11-20',
        score,
        pillarScores: { structuralIntegrity: pillars, failureResistance: pillars, deviceHealth: pillars, recoveryCapability: pillars },
      }),
    );
    return org;
  }

  async function create(org: string, body: object): Promise<JsonResponse> {
    return request(`${t().credentials}/v1/organizations/${org}/authorizations`, {
      method: 'POST',
      headers: { ...(await bearer(org)), 'content-type': 'application/json' },
      body: JSON.stringify({ recipientType: 'insurance_provider', ...body }),
    });
  }

  async function linkFrom(org: string, extra: object = {}): Promise<{ clientId: string; url: string }> {
    const created = await create(org, { scopes: ['qr_score', 'pillar_breakdown'], keyDelivery: 'claimLink', ...extra });
    expect(created.status).toBe(201);
    portfolioSecrets.push(String(created.body.claim.url).split('/').pop() ?? '');
    return { clientId: created.body.clientId, url: created.body.claim.url };
  }

  async function claimIntoNewAccount(url: string, accountName = 'Example Insurance book'): Promise<Account & { clientId: string }> {
    const claimed = await request(url, { method: 'POST', headers: json, body: JSON.stringify({ into: 'account', accountName }) });
    expect(claimed).toMatchObject({
      status: 201,
      body: { accountId: expect.stringMatching(/^rcp_/), accountKey: expect.stringMatching(/^rsa_/) },
    });
    portfolioSecrets.push(claimed.body.accountKey);
    return claimed.body;
  }

  async function anAccount(): Promise<Account> {
    const { accountId, accountKey } = await claimIntoNewAccount((await linkFrom(await anOrganization(50))).url);
    return { accountId, accountKey };
  }

  const asAccount = (account: Account, headers: Record<string, string> = {}) => ({ 'x-api-key': account.accountKey, ...headers });

  /** The account's pending offers on the credentials service, one page. */
  const offersOf = (account: Account, query = '') =>
    request(`${t().credentials}/v1/portfolio/offers${query}`, { headers: asAccount(account) });

  const answerOffer = (account: Account, clientId: string, answer: 'accept' | 'decline') =>
    answerOfferOn(t().credentials, account, clientId, answer);

  const autoAccept = (account: Account, body?: string) =>
    request(`${t().credentials}/v1/portfolio/auto-accept`, {
      method: body === undefined ? 'GET' : 'PUT',
      headers: asAccount(account, body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body }),
    });

  /** A grant offered to the account (`keyDelivery: "account"`): it waits for the account's answer. */
  async function offerTo(account: Account, org: string, body: object = {}): Promise<Grant & { created: JsonResponse }> {
    const created = await create(org, { scopes: ['qr_score'], keyDelivery: 'account', recipientAccountId: account.accountId, ...body });
    expect(created).toMatchObject({ status: 201, body: { status: 'pending', recipientAccountName: null } });
    return { clientId: created.body.clientId, organizationId: org, created };
  }

  /** A grant the account holds: offered, then accepted, unless the account accepts the organization's offers automatically. */
  async function grantTo(account: Account, org: string, body: object = {}): Promise<Grant> {
    const created = await create(org, { scopes: ['qr_score'], keyDelivery: 'account', recipientAccountId: account.accountId, ...body });
    expect(created.status).toBe(201);
    if (created.body.status === 'pending') expect((await answerOffer(account, created.body.clientId, 'accept')).status).toBe(200);
    return { clientId: created.body.clientId, organizationId: org };
  }

  const accessLogOf = async (grant: Grant) =>
    request(`${t().credentials}/v1/organizations/${grant.organizationId}/authorizations/${grant.clientId}/access-log`, {
      headers: await bearer(grant.organizationId),
    });

  const recordOf = async (grant: Grant) =>
    request(`${t().credentials}/v1/organizations/${grant.organizationId}/authorizations/${grant.clientId}`, {
      headers: await bearer(grant.organizationId),
    });

  const read = (replica: string, key: string, path: string, headers: Record<string, string> = {}) =>
    request(`${replica}/v1${path}`, { headers: { 'x-api-key': key, ...headers } });

  /** On every replica, once the events have reached it. */
  async function onEveryReplica(key: string, path: string, accept: (answer: JsonResponse) => boolean): Promise<JsonResponse[]> {
    const answers: JsonResponse[] = [];
    for (const replica of t().readApis) {
      answers.push(
        await eventually(async () => {
          const answer = await read(replica, key, path);
          return accept(answer) ? answer : undefined;
        }, 20_000),
      );
    }
    return answers;
  }

  /** Every page of a portfolio listing, following nextCursor; `between` runs after each page. */
  async function allPages(replica: string, key: string, path: string, limit: number, between: () => Promise<void> = async () => {}) {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await read(replica, key, `${path}${query}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(limit);
      seen.push(...clientIdsOf(page));
      cursor = page.body.nextCursor;
      pages += 1;
      await between();
    } while (cursor !== null && pages < 100);
    return seen;
  }

  const revoke = async (grant: Grant) =>
    request(`${t().credentials}/v1/organizations/${grant.organizationId}/authorizations/${grant.clientId}/revoke`, {
      method: 'POST',
      headers: await bearer(grant.organizationId),
    });

  return {
    'when a recipient claims links into a new account and then into that account, then one account key reads both grants and the grants have no key of their own':
      async () => {
        const [first, second] = [await anOrganization(71, 64), await anOrganization(38, 41)];
        const firstLink = await linkFrom(first);
        const account = await claimIntoNewAccount(firstLink.url);
        const secondLink = await linkFrom(second);

        // With an account key that does not verify, the claim changes nothing and the link stays open.
        const refused = await request(secondLink.url, {
          method: 'POST',
          headers: { ...json, 'x-api-key': generateApiKey('rsa') },
          body: JSON.stringify({ into: 'account' }),
        });
        expect(refused).toMatchObject({ status: 401, body: { code: 'INVALID_API_KEY' } });
        const joined = await request(secondLink.url, {
          method: 'POST',
          headers: { ...json, 'x-api-key': account.accountKey },
          body: JSON.stringify({ into: 'account' }),
        });
        expect(joined).toMatchObject({ status: 201, body: { accountId: account.accountId, clientId: secondLink.clientId } });
        expect(joined.body).not.toHaveProperty('accountKey');
        expect(await request(secondLink.url, { method: 'POST', headers: json, body: '{}' })).toMatchObject({
          status: 410,
          body: { code: 'CLAIM_LINK_USED' },
        });

        const [portfolio] = await onEveryReplica(account.accountKey, '/portfolio', (answer) => answer.body?.customers === 2);
        expect(portfolio?.body).toEqual({ accountId: account.accountId, name: 'Example Insurance book', customers: 2 });
        for (const [grant, score] of [
          [firstLink.clientId, 71],
          [secondLink.clientId, 38],
        ] as const) {
          await onEveryReplica(
            account.accountKey,
            `/customers/${grant}/score`,
            (answer) => answer.status === 200 && answer.body.score === score,
          );
        }
        const scores = await read(t().readApis[0] ?? '', account.accountKey, '/portfolio/scores');
        expect(scores.status).toBe(200);
        expect(new Map(itemsOf<{ clientId: string; score: number }>(scores).map((item) => [item.clientId, item.score]))).toEqual(
          new Map([
            [firstLink.clientId, 71],
            [secondLink.clientId, 38],
          ]),
        );

        // The organization sees which portfolio holds its grant; the grant's key cannot be rotated, the account's is.
        const record = await request(`${t().credentials}/v1/organizations/${first}/authorizations/${firstLink.clientId}`, {
          headers: await bearer(first),
        });
        expect(record.body).toMatchObject({
          recipientAccountId: account.accountId,
          recipientAccountName: 'Example Insurance book',
          keyClaimed: true,
          revocationReason: null,
        });
        const rotate = await request(`${t().credentials}/v1/organizations/${first}/authorizations/${firstLink.clientId}/rotate`, {
          method: 'POST',
          headers: await bearer(first),
        });
        expect(rotate).toMatchObject({ status: 409, body: { code: 'KEY_HELD_BY_ACCOUNT' } });
      },

    'when an organization offers a grant to an account id it knows, then the answer names no account, and the account neither reads nor logs it until it accepts':
      async () => {
        const org = await anOrganization(82);
        // The account is opened with a grant of the same organization, whose access log shows when the account's reads are in.
        const opening = await linkFrom(org);
        const account = await claimIntoNewAccount(opening.url);
        const unknown = await create(org, { scopes: ['qr_score'], keyDelivery: 'account', recipientAccountId: `rcp_${'x'.repeat(24)}` });
        expect(unknown).toMatchObject({ status: 404, body: { code: 'RECIPIENT_ACCOUNT_NOT_FOUND' } });
        const missing = await create(org, { scopes: ['qr_score'], keyDelivery: 'account' });
        expect(missing).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });

        const offer = await offerTo(account, org);
        expect(offer.created.body).not.toHaveProperty('apiKey');
        expect(offer.created.body).not.toHaveProperty('claim');
        expect(offer.created.body).toMatchObject({ recipientAccountId: account.accountId, recipientAccountName: null, keyClaimed: false });
        expect((await recordOf(offer)).body).toMatchObject({ status: 'pending', recipientAccountName: null });
        const listed = await offersOf(account);
        expect(listed).toMatchObject({ status: 200, body: { nextCursor: null } });
        expect(listed.body.items).toEqual([
          {
            clientId: offer.clientId,
            organizationId: org,
            recipientType: 'insurance_provider',
            recipientName: null,
            scopes: ['qr_score'],
            expiresAt: null,
            allowedCidrs: null,
            offeredAt: offer.created.body.createdAt,
          },
        ]);

        // Every replica serves the opening grant's score, and only that one, while the offer waits.
        const pages = await onEveryReplica(account.accountKey, '/portfolio/scores', (answer) =>
          clientIdsOf(answer).includes(opening.clientId),
        );
        for (const page of pages) expect(clientIdsOf(page)).toEqual([opening.clientId]);
        for (const replica of t().readApis) expect((await read(replica, account.accountKey, '/portfolio')).body.customers).toBe(1);
        // Those pages are in the opening grant's access log; the offer's has nothing from them.
        await eventually(
          async () => ((await accessLogOf({ ...opening, organizationId: org })).body.items?.length >= pages.length ? true : undefined),
          20_000,
        );
        expect((await accessLogOf(offer)).body).toMatchObject({ items: [] });
        for (const replica of t().readApis) {
          expect(await read(replica, account.accountKey, `/customers/${offer.clientId}/score`)).toMatchObject({
            status: 401,
            body: { code: 'INVALID_API_KEY' },
          });
        }

        const accepted = await answerOffer(account, offer.clientId, 'accept');
        const customer = {
          clientId: offer.clientId,
          organizationId: org,
          recipientType: 'insurance_provider',
          scopes: ['qr_score'],
          expiresAt: null,
        };
        expect(accepted).toMatchObject({ status: 200, body: customer });
        await onEveryReplica(account.accountKey, `/customers/${offer.clientId}/score`, (answer) => answer.body?.score === 82);
        await onEveryReplica(account.accountKey, '/portfolio', (answer) => answer.body?.customers === 2);
        expect((await offersOf(account)).body.items).toEqual([]);
        // Accepted, the organization sees which portfolio holds its grant; accepting again answers the same.
        expect((await recordOf(offer)).body).toMatchObject({
          status: 'active',
          recipientAccountId: account.accountId,
          recipientAccountName: 'Example Insurance book',
          keyClaimed: true,
        });
        expect(await answerOffer(account, offer.clientId, 'accept')).toMatchObject({ status: 200, body: customer });
      },

    'when offers are declined, revoked, expire or are tried by another account, then only the account answers them, a decline is seen by the organization, and none can be accepted after':
      async () => {
        const account = await anAccount();
        const other = await anAccount();
        const org = await anOrganization(64);
        const declined = await offerTo(account, org);
        const revoked = await offerTo(account, org);
        const expiring = await offerTo(account, org, { expiresAt: new Date(Date.now() + 4_000).toISOString() });
        const kept = await offerTo(account, org, { recipientName: 'Example Insurance', allowedCidrs: ['203.0.113.0/24'] });

        // Another account sees none of them, and cannot tell them from ids that do not exist.
        expect((await offersOf(other)).body).toEqual({ items: [], nextCursor: null });
        const unknownId = `${kept.clientId.split('_')[0]}_${'Z'.repeat(24)}`;
        for (const clientId of [kept.clientId, unknownId, 'not-a-client-id']) {
          for (const answer of ['accept', 'decline'] as const) {
            expect(await answerOffer(other, clientId, answer)).toMatchObject({ status: 404, body: { code: 'OFFER_NOT_FOUND' } });
          }
        }

        // Paged as the portfolio is: every pending offer once, the cursor opaque.
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page: JsonResponse = await offersOf(account, `?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
          expect(page.status).toBe(200);
          expect(page.body.items.length).toBeLessThanOrEqual(1);
          seen.push(...clientIdsOf(page));
          cursor = page.body.nextCursor;
        } while (cursor !== null && seen.length < 10);
        expect(seen.sort()).toEqual([declined, revoked, expiring, kept].map((offer) => offer.clientId).sort());
        expect(await offersOf(account, '?cursor=bm90LW91cnM')).toMatchObject({ status: 400, body: { code: 'INVALID_PARAMETER' } });
        expect(await offersOf(account, '?limit=101')).toMatchObject({ status: 400, body: { code: 'INVALID_PARAMETER' } });
        expect(itemsOf<{ clientId: string }>(await offersOf(account)).find((item) => item.clientId === kept.clientId)).toMatchObject({
          recipientName: 'Example Insurance',
          allowedCidrs: ['203.0.113.0/24'],
        });

        expect((await answerOffer(account, declined.clientId, 'decline')).status).toBe(204);
        expect((await answerOffer(account, declined.clientId, 'decline')).status).toBe(204);
        expect((await recordOf(declined)).body).toMatchObject({
          status: 'revoked',
          revocationReason: 'declined_by_recipient',
          recipientAccountId: account.accountId,
          recipientAccountName: null,
        });
        expect((await revoke(revoked)).status).toBe(200);
        await eventually(async () => (clientIdsOf(await offersOf(account)).includes(expiring.clientId) ? undefined : true), 20_000);
        for (const ended of [declined, revoked, expiring]) {
          expect(await answerOffer(account, ended.clientId, 'accept')).toMatchObject({ status: 409, body: { code: 'OFFER_NOT_PENDING' } });
        }
        for (const ended of [revoked, expiring]) {
          expect(await answerOffer(account, ended.clientId, 'decline')).toMatchObject({ status: 409, body: { code: 'OFFER_NOT_PENDING' } });
        }
        expect(clientIdsOf(await offersOf(account))).toEqual([kept.clientId]);

        // What the other account tried changed nothing: the offer is still the account's to accept.
        expect((await answerOffer(account, kept.clientId, 'accept')).status).toBe(200);
        expect(await answerOffer(account, kept.clientId, 'decline')).toMatchObject({ status: 409, body: { code: 'OFFER_NOT_PENDING' } });
        await onEveryReplica(account.accountKey, '/portfolio', (answer) => answer.body?.customers === 2);
      },

    "when an account accepts an organization automatically, then that organization's next grant is in the portfolio at once, and other offers still wait":
      async () => {
        const account = await anAccount();
        const [trusted, stranger] = [await anOrganization(91), await anOrganization(12)];
        expect(await autoAccept(account)).toMatchObject({ status: 200, body: { organizationIds: [] } });
        const waiting = await offerTo(account, stranger);

        expect(await autoAccept(account, JSON.stringify({ organizationIds: [trusted] }))).toMatchObject({
          status: 200,
          body: { organizationIds: [trusted] },
        });
        expect(await autoAccept(account)).toMatchObject({ status: 200, body: { organizationIds: [trusted] } });
        const created = await create(trusted, { scopes: ['qr_score'], keyDelivery: 'account', recipientAccountId: account.accountId });
        expect(created).toMatchObject({
          status: 201,
          body: { status: 'active', recipientAccountId: account.accountId, recipientAccountName: null, keyClaimed: true },
        });
        await onEveryReplica(account.accountKey, `/customers/${created.body.clientId}/score`, (answer) => answer.body?.score === 91);
        // Only offers made after an organization is trusted are accepted for the account.
        expect(await autoAccept(account, JSON.stringify({ organizationIds: [trusted, stranger] }))).toMatchObject({ status: 200 });
        expect(clientIdsOf(await offersOf(account))).toEqual([waiting.clientId]);
        expect((await autoAccept(await anAccount())).body).toEqual({ organizationIds: [] });

        const tooMany = JSON.stringify({ organizationIds: Array.from({ length: 1001 }, (_, i) => `org-${i}`) });
        for (const body of [
          tooMany,
          '{"organizationIds":["not an id!"]}',
          '{"organizationIds":"x"}',
          '{"organizationIds":[],"extra":1}',
          '{}',
        ]) {
          expect(await autoAccept(account, body)).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
        }
        expect(await autoAccept(account, '{"organizationIds":')).toMatchObject({ status: 400, body: { code: 'MALFORMED_JSON' } });
        expect((await autoAccept(account)).body).toEqual({ organizationIds: [trusted, stranger] });
      },

    'when grants hold different scopes, then each portfolio page shows only what each grant allows, and another account reads none of them':
      async () => {
        const account = await anAccount();
        const other = await anAccount();
        const scoreOnly = await grantTo(account, await anOrganization(55, 50), { scopes: ['qr_score'] });
        const pillarsOnly = await grantTo(account, await anOrganization(66, 61), { scopes: ['pillar_breakdown'] });
        const both = await grantTo(account, await anOrganization(77, 72), { scopes: ['qr_score', 'pillar_breakdown'] });
        await onEveryReplica(account.accountKey, '/portfolio', (answer) => answer.body?.customers === 4);

        for (const replica of t().readApis) {
          const scores = await read(replica, account.accountKey, '/portfolio/scores');
          const pillars = await read(replica, account.accountKey, '/portfolio/pillars');
          const ids = (page: JsonResponse) => clientIdsOf(page).sort();
          expect(ids(scores)).toEqual(expect.arrayContaining([scoreOnly.clientId, both.clientId]));
          expect(ids(scores)).not.toContain(pillarsOnly.clientId);
          // The grant the account was opened with holds both scopes as well.
          expect(ids(pillars)).toHaveLength(3);
          expect(ids(pillars)).toEqual(expect.arrayContaining([pillarsOnly.clientId, both.clientId]));
          expect(ids(pillars)).not.toContain(scoreOnly.clientId);
          expect(itemsOf<{ clientId: string }>(pillars).find((item) => item.clientId === both.clientId)).toEqual({
            clientId: both.clientId,
            scoreDate: '2026-11-20',
            pillarScores: { structuralIntegrity: 72, failureResistance: 72, deviceHealth: 72, recoveryCapability: 72 },
          });
          // Pages are representations like any other: an ETag, a 304 for it, and a signature.
          expect(scores.headers.get('etag')).toMatch(/^"/);
          expect(scores.headers.get('signature')).toBeTruthy();
          const again = await read(replica, account.accountKey, '/portfolio/scores', { 'if-none-match': scores.headers.get('etag') ?? '' });
          expect(again.status).toBe(304);

          // The same checks the grant's own key would get: the scope, and a grant the account does not hold.
          expect(await read(replica, account.accountKey, `/customers/${scoreOnly.clientId}/pillars`)).toMatchObject({
            status: 403,
            body: { code: 'INSUFFICIENT_SCOPE' },
          });
          expect(await read(replica, other.accountKey, `/customers/${both.clientId}/score`)).toMatchObject({
            status: 401,
            body: { code: 'INVALID_API_KEY' },
          });
          const theirs = await read(replica, other.accountKey, '/portfolio/customers');
          expect(clientIdsOf(theirs)).not.toContain(both.clientId);
        }
      },

    'when 250 grants are paged through while grants are added and revoked, then no grant appears twice and none that stayed is missed':
      async () => {
        const account = await anAccount();
        const orgs = [await anOrganization(40), await anOrganization(60), await anOrganization(80)];
        // Accepted automatically, so that each grant is in the portfolio from its creation.
        expect((await autoAccept(account, JSON.stringify({ organizationIds: orgs }))).status).toBe(200);
        const grants: Grant[] = [];
        for (let i = 0; i < 250; i += 1) grants.push(await grantTo(account, orgs[i % orgs.length] ?? ''));
        await onEveryReplica(account.accountKey, '/portfolio', (answer) => answer.body?.customers === 251);

        const before = [...grants];
        const revokedIds = new Set<string>();
        for (const replica of t().readApis) {
          const toRevoke = before.filter((grant) => !revokedIds.has(grant.clientId)).slice(0, 8);
          let next = 0;
          const seen = await allPages(replica, account.accountKey, '/portfolio/customers', 37, async () => {
            // Between pages: one grant revoked, one added.
            const grant = toRevoke[next];
            next += 1;
            if (grant) {
              expect((await revoke(grant)).status).toBe(200);
              revokedIds.add(grant.clientId);
            }
            grants.push(await grantTo(account, orgs[0] ?? ''));
          });
          expect(new Set(seen).size).toBe(seen.length);
          const stayed = before.filter((grant) => !revokedIds.has(grant.clientId)).map((grant) => grant.clientId);
          expect(stayed.length).toBeGreaterThanOrEqual(234);
          expect(seen).toEqual(expect.arrayContaining(stayed));
        }
      },

    'when a grant is revoked, expires, or is released, then it leaves the portfolio and the account key gets the code a revoked key gets':
      async () => {
        const account = await anAccount();
        const revokedGrant = await grantTo(account, await anOrganization(31));
        const released = await grantTo(account, await anOrganization(32));
        const expiresAt = new Date(Date.now() + 4_000).toISOString();
        const expiring = await grantTo(account, await anOrganization(33), { expiresAt });
        await onEveryReplica(account.accountKey, '/portfolio', (answer) => answer.body?.customers === 4);

        expect((await revoke(revokedGrant)).status).toBe(200);
        const release = await request(`${t().credentials}/v1/portfolio/customers/${released.clientId}`, {
          method: 'DELETE',
          headers: { 'x-api-key': account.accountKey },
        });
        expect(release.status).toBe(204);
        const again = await request(`${t().credentials}/v1/portfolio/customers/${released.clientId}`, {
          method: 'DELETE',
          headers: { 'x-api-key': account.accountKey },
        });
        expect(again.status).toBe(204);
        const notHeld = await request(`${t().credentials}/v1/portfolio/customers/${released.clientId}`, {
          method: 'DELETE',
          headers: { 'x-api-key': (await anAccount()).accountKey },
        });
        expect(notHeld).toMatchObject({ status: 404, body: { code: 'AUTHORIZATION_NOT_FOUND' } });

        for (const grant of [revokedGrant, released]) {
          await onEveryReplica(
            account.accountKey,
            `/customers/${grant.clientId}/score`,
            (answer) => answer.body?.code === 'CREDENTIAL_INACTIVE',
          );
        }
        const record = await request(`${t().credentials}/v1/organizations/${released.organizationId}/authorizations/${released.clientId}`, {
          headers: await bearer(released.organizationId),
        });
        expect(record.body).toMatchObject({ status: 'revoked', revocationReason: 'released_by_recipient' });
        const byOrganization = await request(
          `${t().credentials}/v1/organizations/${revokedGrant.organizationId}/authorizations/${revokedGrant.clientId}`,
          { headers: await bearer(revokedGrant.organizationId) },
        );
        expect(byOrganization.body).toMatchObject({ status: 'revoked', revocationReason: 'organization' });

        await onEveryReplica(
          account.accountKey,
          `/customers/${expiring.clientId}/score`,
          (answer) => answer.body?.code === 'CREDENTIAL_INACTIVE',
        );
        for (const replica of t().readApis) {
          const listed = await allPages(replica, account.accountKey, '/portfolio/customers', 100);
          // Only the grant the account was opened with is left.
          expect(listed).toHaveLength(1);
          expect(listed).not.toContain(revokedGrant.clientId);
          expect((await read(replica, account.accountKey, '/portfolio')).body.customers).toBe(1);
        }
      },

    'when a grant is revoked, then within one second of the 200 every replica refuses it to the account key and leaves it off the pages':
      async () => {
        const account = await anAccount();
        const org = await anOrganization(58);
        const latencies: number[] = [];
        for (let trial = 0; trial < 5; trial += 1) {
          const grant = await grantTo(account, org);
          await onEveryReplica(account.accountKey, `/customers/${grant.clientId}/score`, (answer) => answer.status === 200);
          const revoked = await revoke(grant);
          const t0 = performance.now();
          expect(revoked.status).toBe(200);
          await Promise.all(
            t().readApis.map((replica) =>
              eventually(
                async () => {
                  const [score, listed] = [
                    await read(replica, account.accountKey, `/customers/${grant.clientId}/score`),
                    await read(replica, account.accountKey, '/portfolio/customers?limit=100'),
                  ];
                  return score.body?.code === 'CREDENTIAL_INACTIVE' && !clientIdsOf(listed).includes(grant.clientId) ? true : undefined;
                },
                5_000,
                10,
              ),
            ),
          );
          latencies.push(performance.now() - t0);
        }
        process.stderr.write(
          `[portfolio] revocation enforced for the account key on every replica after ${latencies.map((l) => l.toFixed(0)).join(', ')} ms\n`,
        );
        expect(Math.max(...latencies)).toBeLessThanOrEqual(1000);
      },

    'when a grant allows only other addresses, then the account key is refused for it from here, every page leaves it out and says so, and its access log shows no read of it':
      async () => {
        const opener = await anOrganization(50);
        const link = await linkFrom(opener);
        const account = await claimIntoNewAccount(link.url);
        // The address the services see this suite's requests come from, as the claim recorded it: loopback here, a
        // network's gateway in front of containers.
        const seen: string = (await recordOf({ clientId: link.clientId, organizationId: opener })).body.claimedFromAddress;
        const both = { scopes: ['qr_score', 'pillar_breakdown'] };
        const limited = await grantTo(account, await anOrganization(44), { ...both, allowedCidrs: ['203.0.113.0/24'] });
        const inside = await grantTo(account, await anOrganization(45), { ...both, allowedCidrs: [rangeOfOne(seen)] });
        await onEveryReplica(account.accountKey, '/portfolio', (answer) => answer.body?.customers === 3);
        const pageReads: string[] = [];
        for (const replica of t().readApis) {
          expect(await read(replica, account.accountKey, `/customers/${limited.clientId}/score`)).toMatchObject({
            status: 403,
            body: { code: 'ADDRESS_NOT_ALLOWED' },
          });
          for (const page of ['customers', 'scores', 'pillars']) {
            const answer = await read(replica, account.accountKey, `/portfolio/${page}`);
            expect(answer.status).toBe(200);
            pageReads.push(answer.headers.get('x-request-id') ?? '');
            // The account's own grant and the one limited to this address are there: the page is not empty by accident.
            expect(clientIdsOf(answer)).toHaveLength(2);
            expect(clientIdsOf(answer)).toContain(inside.clientId);
            expect(clientIdsOf(answer)).not.toContain(limited.clientId);
            expect(answer.body.leftOut).toEqual({ addressNotAllowed: 1 });
          }
        }

        const accessLog = async (grant: Grant) =>
          (
            await request(
              `${t().credentials}/v1/organizations/${grant.organizationId}/authorizations/${grant.clientId}/access-log?limit=500`,
              {
                headers: await bearer(grant.organizationId),
              },
            )
          ).body.items as { requestId: string; status: number; code: string | null }[];
        // Once the grant served on the same pages has each score and pillars page in its log, and the left-out grant has the
        // refusals made before them, a page read of the left-out grant would be there too.
        const served = await eventually(async () => {
          const items = await accessLog(inside);
          return items.filter((entry) => pageReads.includes(entry.requestId)).length === 2 * t().readApis.length ? items : undefined;
        }, 20_000);
        expect(served.every((entry) => entry.status === 200)).toBe(true);
        const refused = await eventually(async () => {
          const items = await accessLog(limited);
          return items.length >= t().readApis.length ? items : undefined;
        }, 20_000);
        expect(refused.filter((entry) => pageReads.includes(entry.requestId))).toEqual([]);
        expect(refused.map((entry) => entry.code)).toEqual(t().readApis.map(() => 'ADDRESS_NOT_ALLOWED'));
      },

    'when the account key is rotated with an overlap, then both keys work until the overlap ends, then only the new one': async () => {
      const account = await anAccount();
      const rotated = await request(`${t().credentials}/v1/portfolio/keys/rotate`, {
        method: 'POST',
        headers: { 'x-api-key': account.accountKey, 'content-type': 'application/json' },
        body: JSON.stringify({ overlapSeconds: 3 }),
      });
      expect(rotated).toMatchObject({
        status: 201,
        body: { accountKey: expect.stringMatching(/^rsa_/), previousKeyExpiresAt: expect.any(String) },
      });
      const newKey: string = rotated.body.accountKey;
      portfolioSecrets.push(newKey);
      await onEveryReplica(newKey, '/portfolio', (answer) => answer.status === 200);
      for (const replica of t().readApis) expect((await read(replica, account.accountKey, '/portfolio')).status).toBe(200);
      // Refused once the overlap has ended, and not before it: the first refusal on each replica comes at
      // most a second early (a slow machine's room; an overlap cut short would show seconds early).
      const overlapEnds = Date.parse(rotated.body.previousKeyExpiresAt);
      for (const replica of t().readApis) {
        const refused = await eventually(async () => {
          const answer = await read(replica, account.accountKey, '/portfolio');
          return answer.status === 200 ? undefined : answer;
        }, 20_000);
        expect(Date.now()).toBeGreaterThanOrEqual(overlapEnds - 1_000);
        expect(refused).toMatchObject({ status: 401, body: { code: 'INVALID_API_KEY' } });
        expect((await read(replica, newKey, '/portfolio')).status).toBe(200);
      }
      const outOfRange = await request(`${t().credentials}/v1/portfolio/keys/rotate`, {
        method: 'POST',
        headers: { 'x-api-key': newKey, 'content-type': 'application/json' },
        body: JSON.stringify({ overlapSeconds: 86_401 }),
      });
      expect(outOfRange).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    },

    'when an account reads past its limit, then it is refused with 429 and the RateLimit headers, a page counting once': async () => {
      const account = await anAccount();
      const limit = t().accountLimitPerMinute;
      const replicas = t().readApis;
      await onEveryReplica(account.accountKey, '/portfolio', (answer) => answer.status === 200);
      // What onEveryReplica used is counted too; the rest of the budget is spent across the replicas in turn.
      let answer: JsonResponse | undefined;
      for (let i = 0; i < limit + 1; i += 1) {
        answer = await read(replicas[i % replicas.length] ?? '', account.accountKey, '/portfolio/scores?limit=100');
        if (answer.status === 429) break;
        expect(answer.headers.get('ratelimit')).toMatch(/^"account"; r=\d+; t=\d+$/);
      }
      expect(answer?.status).toBe(429);
      expect(answer?.headers.get('retry-after')).toMatch(/^\d+$/);
    },
  };
}

/** A webhook's attempts as its deliveries list gives them. */
interface ListedDelivery {
  messageId: string;
  eventType: string;
  status: string;
  skipped?: string;
}

/**
 * An account opened by claiming a grant of `org` into it (with the organization's `token`), on the
 * credentials service at `credentials`; its key and the link's token join the secrets searched for.
 */
export async function accountClaimedFrom(credentials: string, org: string, token: string): Promise<Account & { clientId: string }> {
  const link = await request(`${credentials}/v1/organizations/${org}/authorizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], keyDelivery: 'claimLink' }),
  });
  expect(link.status).toBe(201);
  const opened = await request(link.body.claim.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ into: 'account' }),
  });
  expect(opened.status).toBe(201);
  portfolioSecrets.push(opened.body.accountKey, String(link.body.claim.url).split('/').pop() ?? '');
  return opened.body as Account & { clientId: string };
}

/**
 * What the webhook scenarios share: organizations with a score, an account opened by claiming one's
 * grant, grants straight to it, webhooks made as the API makes them, and their deliveries lists.
 */
function webhookScenarioSteps(t: () => PortfolioWebhookTarget) {
  const admin = async (org: string) => ({ authorization: `Bearer ${await t().tokenFor(org)}`, 'content-type': 'application/json' });
  const post = async (org: string, score: number) =>
    orgAdmin.postScore(t().scoreIngest, await t().tokenFor(org), aScoreSubmission({ organizationId: org, scoreDate: '2026-11-21', score }));

  /** `count` organizations with a score of 50 each. */
  async function organizations(count: number): Promise<string[]> {
    const orgs = Array.from({ length: count }, () => `pfw-${randomUUID().slice(0, 8)}`);
    for (const org of orgs) await post(org, 50);
    return orgs;
  }

  const openAccount = async (org: string) => accountClaimedFrom(t().credentials, org, await t().tokenFor(org));

  /** A grant of `org` offered to the account, which accepts it. */
  async function grantTo(account: Account, org: string, scopes: string[], extra: object = {}): Promise<string> {
    const created = await request(`${t().credentials}/v1/organizations/${org}/authorizations`, {
      method: 'POST',
      headers: await admin(org),
      body: JSON.stringify({ recipientType: 'auditor', scopes, keyDelivery: 'account', recipientAccountId: account.accountId, ...extra }),
    });
    expect(created.status).toBe(201);
    expect((await answerOfferOn(t().credentials, account, created.body.clientId, 'accept')).status).toBe(200);
    return created.body.clientId as string;
  }

  /** A webhook made once the notifier knows the key (its views may lag the credentials service a little). */
  async function subscribe(hooks: string, key: string, body: object, headers: Record<string, string> = {}): Promise<JsonResponse> {
    const created = await eventually(async () => {
      const answer = await request(hooks, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return answer.status === 201 ? answer : undefined;
    });
    portfolioSecrets.push(created.body.secret);
    return created;
  }

  /** The deliveries list of the webhook at `hook` once `accept` holds of it. */
  async function deliveriesOnce(
    hook: string,
    key: string,
    accept: (deliveries: ListedDelivery[]) => boolean,
    headers: Record<string, string> = {},
  ): Promise<ListedDelivery[]> {
    return eventually(async () => {
      const answer = await request(`${hook}/deliveries`, { headers: { 'x-api-key': key, ...headers } });
      const deliveries = answer.body?.deliveries as ListedDelivery[] | undefined;
      return deliveries && accept(deliveries) ? deliveries : undefined;
    }, 20_000);
  }

  return { admin, post, organizations, openAccount, grantTo, subscribe, deliveriesOnce };
}

const dataOf = (delivery: Received) => JSON.parse(delivery.body) as { type: string; data: { clientId?: string; score?: number } };
const skippedFor = (deliveries: ListedDelivery[]) => deliveries.filter((delivery) => delivery.skipped === 'address_not_allowed');
/** An allow list holding `host` (the receivers' host as the notifier reaches them): all of loopback for 127.0.0.1. */
/** The range of exactly one address, an IPv4 one written as IPv4 even when the service saw it IPv4-mapped. */
function rangeOfOne(address: string): string {
  const v4 = address.replace(/^::ffff:/i, '');
  return v4.includes(':') ? `${v4}/128` : `${v4}/32`;
}
const rangeHolding = (host: string) => (host === '127.0.0.1' ? '127.0.0.0/8' : `${host}/32`);
/** The allow list no address of these runs is in (TEST-NET-3). */
const ELSEWHERE = '203.0.113.0/24';

/** Decision 42's portfolio webhooks: fired for every grant the account holds, each delivery naming its grant. */
export function portfolioWebhookScenarios(target: () => PortfolioWebhookTarget) {
  const t = () => target();
  const { admin, post, organizations, openAccount, grantTo, subscribe, deliveriesOnce } = webhookScenarioSteps(t);

  return {
    'when an account subscribes to its portfolio, then every grant it holds is delivered signed with its clientId, as each grant allows, and an ending too':
      async () => {
        const orgs = await organizations(3);
        const { accountId, accountKey, clientId: first } = await openAccount(orgs[0] ?? '');
        const second = await grantTo({ accountId, accountKey }, orgs[1] ?? '', ['qr_score', 'pillar_breakdown']);
        const pillarsOnly = await grantTo({ accountId, accountKey }, orgs[2] ?? '', ['pillar_breakdown']);

        const receiver = await startSwitchableReceiver(t().receiverHost);
        try {
          const hooks = `${t().notifier}/v1/portfolio/webhooks`;
          const created = await subscribe(hooks, accountKey, { url: receiver.url, events: ['score.updated', 'authorization.ended'] });
          const secret = created.body.secret as string;
          expect(await request(hooks, { headers: { 'x-api-key': generateApiKey('rsa') } })).toMatchObject({ status: 401 });
          expect((await request(hooks, { headers: { 'x-api-key': accountKey } })).body).toMatchObject({
            webhooks: [expect.objectContaining({ id: created.body.id })],
          });

          await post(orgs[0] ?? '', 61);
          await post(orgs[1] ?? '', 62);
          await post(orgs[2] ?? '', 63);
          const updates = await eventually(() => {
            const got = receiver.received.filter((delivery) => dataOf(delivery).type === 'score.updated');
            return Promise.resolve(got.length >= 2 ? got : undefined);
          }, 20_000);
          expect(new Map(updates.map((delivery) => [dataOf(delivery).data.clientId, dataOf(delivery).data.score]))).toEqual(
            new Map([
              [first, 61],
              [second, 62],
            ]),
          );
          for (const delivery of updates) expect(verifiesWith(delivery, secret)).toBe(true);

          const revoked = await request(`${t().credentials}/v1/organizations/${orgs[1]}/authorizations/${second}/revoke`, {
            method: 'POST',
            headers: await admin(orgs[1] ?? ''),
          });
          expect(revoked.status).toBe(200);
          const ended = await eventually(
            () => Promise.resolve(receiver.received.find((delivery) => dataOf(delivery).type === 'authorization.ended')),
            20_000,
          );
          expect(dataOf(ended).data.clientId).toBe(second);
          expect(verifiesWith(ended, secret)).toBe(true);
          // The pillars-only grant's score change reached nothing: score.updated needs qr_score.
          expect(receiver.received.map((delivery) => dataOf(delivery).data.clientId)).not.toContain(pillarsOnly);
        } finally {
          await receiver.close();
        }
      },

    "when a grant allows only other addresses than the receiver's, then the portfolio's webhook gets none of its scores and lists them skipped, while the account's other grants are delivered":
      async () => {
        const [opener, far, near] = await organizations(3);
        const { accountId, accountKey, clientId: open } = await openAccount(opener ?? '');
        const limited = await grantTo({ accountId, accountKey }, far ?? '', ['qr_score'], { allowedCidrs: [ELSEWHERE] });
        const inside = await grantTo({ accountId, accountKey }, near ?? '', ['qr_score'], {
          allowedCidrs: [rangeHolding(t().receiverHost)],
        });

        const receiver = await startSwitchableReceiver(t().receiverHost);
        try {
          const hooks = `${t().notifier}/v1/portfolio/webhooks`;
          const created = await subscribe(hooks, accountKey, { url: receiver.url, events: ['score.updated'] });
          // The limited grant's score first: had it been sent, it would be there before the others.
          await post(far ?? '', 71);
          await post(opener ?? '', 72);
          await post(near ?? '', 73);

          const deliveries = await deliveriesOnce(
            `${hooks}/${created.body.id}`,
            accountKey,
            (listed) => skippedFor(listed).length > 0 && listed.filter((delivery) => delivery.status === 'succeeded').length >= 2,
          );
          const delivered = new Map(receiver.received.map((delivery) => [dataOf(delivery).data.clientId, dataOf(delivery).data.score]));
          expect(delivered).toEqual(
            new Map([
              [open, 72],
              [inside, 73],
            ]),
          );
          const [skipped, ...more] = skippedFor(deliveries);
          expect(more).toEqual([]);
          expect(skipped).toMatchObject({ eventType: 'score.updated', status: 'skipped', attempt: 1 });
          // Its webhook-id is none the receiver got: the limited grant's event, and only tried once.
          expect(receiver.received.map((delivery) => delivery.headers['webhook-id'])).not.toContain(skipped?.messageId);
          expect(deliveries.filter((delivery) => delivery.messageId === skipped?.messageId)).toHaveLength(1);
          expect((await request(hooks, { headers: { 'x-api-key': accountKey } })).body.webhooks[0].status).toBe('active');
          expect(receiver.received.map((delivery) => dataOf(delivery).data.clientId)).not.toContain(limited);
        } finally {
          await receiver.close();
        }
      },
  };
}

/**
 * A grant's own webhooks bounded by its allow list as a portfolio's are. The limited grant's webhook
 * can only be made from inside its ranges: the product must trust one proxy hop (TRUST_PROXY_HOPS=1),
 * so that the scenario makes it from an address it names in X-Forwarded-For.
 */
export function grantWebhookAddressScenarios(target: () => PortfolioWebhookTarget) {
  const t = () => target();
  const { post, organizations, openAccount, grantTo, subscribe, deliveriesOnce } = webhookScenarioSteps(t);

  return {
    "when a grant allows only other addresses than its own webhook's receiver, then its scores and its test are skipped and listed, while a grant limited to the receiver's address is delivered":
      async () => {
        const [opener, far, near] = await organizations(3);
        const { accountId, accountKey } = await openAccount(opener ?? '');
        const limited = await grantTo({ accountId, accountKey }, far ?? '', ['qr_score'], { allowedCidrs: [ELSEWHERE] });
        const inside = await grantTo({ accountId, accountKey }, near ?? '', ['qr_score'], {
          allowedCidrs: [rangeHolding(t().receiverHost)],
        });
        const fromElsewhere = { 'x-forwarded-for': '203.0.113.9' };

        const receiver = await startSwitchableReceiver(t().receiverHost);
        try {
          const hooksOf = (clientId: string) => `${t().notifier}/v1/customers/${clientId}/webhooks`;
          const body = { url: receiver.url, events: ['score.updated'] };
          // From here the limited grant is refused, as every request with its data; from inside its ranges its webhook is made.
          await eventually(async () => {
            const refused = await request(hooksOf(limited), {
              method: 'POST',
              headers: { 'x-api-key': accountKey, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            return refused.body?.code === 'ADDRESS_NOT_ALLOWED' ? true : undefined;
          });
          const limitedHook = await subscribe(hooksOf(limited), accountKey, body, fromElsewhere);
          const insideHook = await subscribe(hooksOf(inside), accountKey, body);

          await post(far ?? '', 81);
          await post(near ?? '', 82);
          const limitedUrl = `${hooksOf(limited)}/${limitedHook.body.id}`;
          await deliveriesOnce(limitedUrl, accountKey, (listed) => skippedFor(listed).length === 1, fromElsewhere);
          const tested = await request(`${limitedUrl}/test`, { method: 'POST', headers: { 'x-api-key': accountKey, ...fromElsewhere } });
          expect(tested.status).toBe(202);
          await deliveriesOnce(`${hooksOf(inside)}/${insideHook.body.id}`, accountKey, (listed) =>
            listed.some((delivery) => delivery.status === 'succeeded'),
          );

          const deliveries = await deliveriesOnce(limitedUrl, accountKey, (listed) => skippedFor(listed).length === 2, fromElsewhere);
          expect(deliveries.map(({ eventType, status, skipped }) => ({ eventType, status, skipped }))).toEqual([
            { eventType: 'webhook.test', status: 'skipped', skipped: 'address_not_allowed' },
            { eventType: 'score.updated', status: 'skipped', skipped: 'address_not_allowed' },
          ]);
          expect(
            receiver.received.map((delivery) => [dataOf(delivery).type, dataOf(delivery).data.clientId, dataOf(delivery).data.score]),
          ).toEqual([['score.updated', inside, 82]]);
        } finally {
          await receiver.close();
        }
      },
  };
}
