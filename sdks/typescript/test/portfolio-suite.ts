import { request } from '@rsd/testkit';
import { everyAnswerDocumented, type Answer } from './documented-answers.js';
import { eventually } from '../../../test/support/embedded-process.js';
import { startSwitchableReceiver, verifiesWith, type Received, type SwitchableReceiver } from '../../../test/support/webhook-lifecycle.js';
import {
  ApiError,
  AuthorizationNotFound,
  Client,
  InvalidApiKey,
  KeyReadOnly,
  OfferNotFound,
  OfferNotPending,
  Organization,
  Portfolio,
  RecipientAccountNotFound,
  verifyWebhook,
  WebhookLimitReached,
  WebhookMessageNotFound,
  WebhookNotActive,
  WebhookNotFound,
  type PortfolioItems,
  type ScoreSubmission,
  type Webhooks,
} from '@resilience-score/client';
import type { ProductUnderTest } from './product-under-test.js';

/** What the product must be started with for this suite: the tests poll until it has caught up, well within these; receivers on loopback (decision 28's development flag). */
export const PORTFOLIO_SUITE_ENV = {
  RATE_LIMIT_PER_MINUTE: '1000',
  ACCOUNT_RATE_LIMIT_PER_MINUTE: '5000',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};

const GRADES = ['Prioritize', 'Improve', 'Strengthen', 'Optimize', 'Sustain'] as const;
const DAY = 86_400_000;
const GRANTS = 7;
/** How long ago the first score of an organization is dated: the scores a test publishes after it are newer. */
const FIRST_SCORE_DAYS_AGO = 10;

/**
 * Portfolios and the webhook lifecycle through the TypeScript SDK against the real product, on whichever
 * runtime `running` gives (started with PORTFOLIO_SUITE_ENV): an account of several grants iterated
 * across pages, read grant by grant with the account key, its key rotated and a grant released; and a
 * grant's, a portfolio's and an organization's webhook managed through their whole lifecycle, every
 * delivery received by a receiver on loopback and verified with the SDK's `verifyWebhook` and with the
 * official `standardwebhooks` library. Registers its hooks and describes where it is called.
 */
/** Until the account's client of a grant reads `score` (the grant reaches the read API a moment after it is made). */
async function readsScore(portfolio: Portfolio, clientId: string, score: number): Promise<void> {
  await eventually(async () =>
    (
      await portfolio
        .client(clientId)
        .score()
        .catch(() => undefined)
    )?.score === score
      ? true
      : undefined,
  );
}

export function portfolioSuite(running: () => ProductUnderTest): void {
  let product: ProductUnderTest;
  let runs = 0;
  const receivers: SwitchableReceiver[] = [];
  /** Every answer of the read API, the notifier and the credentials service in this run, held against their OpenAPI documents at the end. */
  const answered: Answer[] = [];

  beforeAll(() => {
    product = running();
    const send = globalThis.fetch;
    jest.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const response = await send(input, init);
      const url = new URL(input instanceof Request ? input.url : input);
      if ([product.urls.readApi, product.urls.notifier, product.urls.credentials].includes(url.origin) && url.pathname.startsWith('/v1/')) {
        const json = response.headers.get('content-type')?.includes('json') ? await response.clone().json() : undefined;
        answered.push({ url, method: init?.method ?? 'GET', status: response.status, body: json });
      }
      return response;
    });
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  const urls = () => ({
    baseUrl: `${product.urls.readApi}/v1`,
    credentialsUrl: `${product.urls.credentials}/v1`,
    notifierUrl: `${product.urls.notifier}/v1`,
  });

  /** A new organization of this run, as its administrator (and its scoring engine) uses the SDK. */
  async function anOrganization(): Promise<{ id: string; organization: Organization }> {
    runs += 1;
    const id = `sdk-pf-${Date.now().toString(36)}-${runs}`;
    const token = await product.token({ org: id, scope: 'authorizations:write scores:write' });
    return { id, organization: new Organization({ token, ...urls(), ingestUrl: `${product.urls.scoreIngest}/v1` }) };
  }

  function aScore(organizationId: string, score: number, daysAgo = 1): ScoreSubmission {
    return {
      organizationId,
      scoreDate: new Date(Date.now() - daysAgo * DAY).toISOString().slice(0, 10),
      score,
      grade: GRADES[Math.min(Math.floor(score / 20), 4)]!,
      pillarScores: { structuralIntegrity: score, failureResistance: 50, deviceHealth: 60, recoveryCapability: 70 },
    };
  }

  /**
   * An account made as a recipient makes one: an organization's claim link claimed `into: "account"`.
   * Answers the account, the grant it was opened with and its organization.
   */
  async function anAccount(score = 50) {
    const { id, organization } = await anOrganization();
    await organization.publishScores([aScore(id, score, FIRST_SCORE_DAYS_AGO)]);
    const created = await organization.authorizations.create({
      recipientType: 'insurance_provider',
      scopes: ['qr_score', 'pillar_breakdown'],
      keyDelivery: 'claimLink',
    });
    const claimed = await request<{ accountId: string; accountKey: string; clientId: string }>(created.claim.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ into: 'account', accountName: 'SDK book' }),
    });
    expect(claimed.status).toBe(201);
    return { ...claimed.body, organizationId: id, organization };
  }

  async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
    const collected: T[] = [];
    for await (const item of items) collected.push(item);
    return collected;
  }

  const refusalOf = (call: Promise<unknown>): Promise<unknown> =>
    call.then(
      () => undefined,
      (error: unknown) => error,
    );

  async function aReceiver(): Promise<SwitchableReceiver> {
    const receiver = await startSwitchableReceiver('127.0.0.1');
    receivers.push(receiver);
    return receiver;
  }

  /** The `n`th delivery the receiver got (0-based), once it has. */
  const delivery = (receiver: SwitchableReceiver, n: number): Promise<Received> =>
    eventually(() => Promise.resolve(receiver.received[n]), 15_000);

  describe('a portfolio', () => {
    let account: Awaited<ReturnType<typeof anAccount>>;
    let portfolio: Portfolio;
    /** Every grant the account holds, and the score its organization published. */
    const scores = new Map<string, number>();

    beforeAll(async () => {
      account = await anAccount(50);
      scores.set(account.clientId, 50);
      portfolio = new Portfolio({ accountKey: account.accountKey, ...urls() });
      for (let i = 0; i < GRANTS - 1; i += 1) {
        const { id, organization } = await anOrganization();
        await organization.publishScores([aScore(id, 30 + i * 9, FIRST_SCORE_DAYS_AGO)]);
        const granted = await organization.authorizations.create({
          recipientType: 'auditor',
          scopes: ['qr_score'],
          keyDelivery: 'account',
          recipientAccountId: account.accountId,
        });
        // Offered: the account takes it into its portfolio by accepting it.
        expect(granted).toMatchObject({ status: 'pending', recipientAccountId: account.accountId, recipientAccountName: null });
        await portfolio.acceptOffer(granted.clientId);
        scores.set(granted.clientId, 30 + i * 9);
      }
      // The read API follows the event log: until it has seen every grant and score.
      await eventually(async () => {
        const summary = await portfolio.summary().catch(() => undefined);
        if (summary?.customers !== GRANTS) return undefined;
        return (await all(portfolio.scores())).length === GRANTS ? true : undefined;
      }, 20_000);
    }, 60_000);

    test('when it is iterated with a small limit, then every page is followed and every grant comes exactly once, with its score', async () => {
      const pages: string[] = [];
      const counting = new Portfolio({
        accountKey: account.accountKey,
        ...urls(),
        fetch: (input, init) => {
          pages.push(new URL(input instanceof Request ? input.url : input).pathname);
          return fetch(input, init);
        },
      });

      const customers = await all(counting.customers({ limit: 2 }));
      const scored = await all(counting.scores({ limit: 3 }));
      const pillars = await all(counting.pillars({ limit: 1 }));

      expect(await counting.summary()).toEqual({ accountId: account.accountId, name: 'SDK book', customers: GRANTS });
      expect(customers.map((customer) => customer.clientId).sort()).toEqual([...scores.keys()].sort());
      expect(customers.find((customer) => customer.clientId === account.clientId)).toEqual({
        clientId: account.clientId,
        organizationId: account.organizationId,
        recipientType: 'insurance_provider',
        scopes: ['qr_score', 'pillar_breakdown'],
        expiresAt: null,
      });
      expect(new Map(scored.map((item) => [item.clientId, item.score]))).toEqual(scores);
      expect(scored).toHaveLength(GRANTS);
      // Only the grant the account was opened with holds pillar_breakdown.
      expect(pillars.map((item) => [item.clientId, item.pillarScores.structuralIntegrity])).toEqual([[account.clientId, 50]]);
      // Each item carries the signed page it came in, verified before it was returned.
      expect(scored[0]?.evidence.headers.signature).toBeTruthy();
      expect(pages.filter((path) => path.endsWith('/portfolio/customers'))).toHaveLength(Math.ceil(GRANTS / 2));
      expect(pages.filter((path) => path.endsWith('/portfolio/scores'))).toHaveLength(Math.ceil(GRANTS / 3));
    });

    test('when a grant allows only other addresses, then each iterator leaves it out and its leftOut counts it, across pages', async () => {
      const book = await anAccount(50);
      const { id, organization } = await anOrganization();
      await organization.publishScores([aScore(id, 44, FIRST_SCORE_DAYS_AGO)]);
      const offered = await organization.authorizations.create({
        recipientType: 'auditor',
        scopes: ['qr_score', 'pillar_breakdown'],
        keyDelivery: 'account',
        recipientAccountId: book.accountId,
        allowedCidrs: ['203.0.113.0/24'],
      });
      const reader = new Portfolio({ accountKey: book.accountKey, ...urls() });
      await reader.acceptOffer(offered.clientId);
      await eventually(async () => ((await reader.summary().catch(() => undefined))?.customers === 2 ? true : undefined), 20_000);

      const listings: PortfolioItems<{ clientId: string }>[] = [
        reader.customers({ limit: 1 }),
        reader.scores({ limit: 1 }),
        reader.pillars(),
      ];
      for (const items of listings) {
        expect(items.leftOut).toEqual({ addressNotAllowed: 0 });
        expect((await all(items)).map((item) => item.clientId)).toEqual([book.clientId]);
        expect(items.leftOut).toEqual({ addressNotAllowed: 1 });
      }
    });

    test('when a grant is read through client(clientId), then the account key reads its score, and a grant it does not hold is refused', async () => {
      const [clientId, score] = [...scores.entries()][3]!;
      const other = await anAccount(90);

      await expect(portfolio.client(clientId).score()).resolves.toMatchObject({ clientId, score });
      const refused = await refusalOf(new Portfolio({ accountKey: other.accountKey, ...urls() }).client(clientId).score());
      expect(refused).toBeInstanceOf(InvalidApiKey);
    });

    test('when the organization grants to an account that does not exist, then RecipientAccountNotFound', async () => {
      const { organization } = await anOrganization();
      const refused = await refusalOf(
        organization.authorizations.create({
          recipientType: 'auditor',
          scopes: ['qr_score'],
          keyDelivery: 'account',
          recipientAccountId: `rcp_${'x'.repeat(24)}`,
        }),
      );
      expect(refused).toBeInstanceOf(RecipientAccountNotFound);
    });

    test('when organizations offer grants, then offers() pages through them, acceptOffer takes one, declineOffer ends another, and a wrong answer is OfferNotFound or OfferNotPending', async () => {
      const mine = await anAccount(40);
      const own = new Portfolio({ accountKey: mine.accountKey, ...urls() });
      const offer = async () => {
        const { id, organization } = await anOrganization();
        await organization.publishScores([aScore(id, 44, FIRST_SCORE_DAYS_AGO)]);
        const created = await organization.authorizations.create({
          recipientType: 'partner',
          recipientName: 'SDK partner',
          scopes: ['qr_score'],
          keyDelivery: 'account',
          recipientAccountId: mine.accountId,
        });
        return { clientId: created.clientId, organization };
      };
      const [kept, declined, third] = [await offer(), await offer(), await offer()];

      const listed = await all(own.offers({ limit: 2 }));

      expect(listed.map((item) => item.clientId).sort()).toEqual([kept.clientId, declined.clientId, third.clientId].sort());
      expect(listed.find((item) => item.clientId === kept.clientId)).toMatchObject({
        recipientType: 'partner',
        recipientName: 'SDK partner',
        scopes: ['qr_score'],
        allowedCidrs: null,
        offeredAt: expect.any(String),
      });
      expect(await own.acceptOffer(kept.clientId)).toMatchObject({ clientId: kept.clientId, scopes: ['qr_score'] });
      await expect(own.declineOffer(declined.clientId)).resolves.toBeUndefined();
      expect(await declined.organization.authorizations.get(declined.clientId)).toMatchObject({
        status: 'revoked',
        revocationReason: 'declined_by_recipient',
      });
      expect(await refusalOf(own.acceptOffer(declined.clientId))).toBeInstanceOf(OfferNotPending);
      expect(await refusalOf(portfolio.acceptOffer(third.clientId))).toBeInstanceOf(OfferNotFound);
      expect((await all(own.offers())).map((item) => item.clientId)).toEqual([third.clientId]);
      await readsScore(own, kept.clientId, 44);
    });

    test('when the account names organizations to accept automatically, then the list reads back and their next offer is in the portfolio at once', async () => {
      const mine = await anAccount(41);
      const own = new Portfolio({ accountKey: mine.accountKey, ...urls() });
      const { id, organization } = await anOrganization();
      await organization.publishScores([aScore(id, 77, FIRST_SCORE_DAYS_AGO)]);

      expect(await own.autoAccept()).toEqual({ organizationIds: [] });
      expect(await own.setAutoAccept([id])).toEqual({ organizationIds: [id] });
      expect(await own.autoAccept()).toEqual({ organizationIds: [id] });
      const created = await organization.authorizations.create({
        recipientType: 'auditor',
        scopes: ['qr_score'],
        keyDelivery: 'account',
        recipientAccountId: mine.accountId,
      });

      expect(created).toMatchObject({ status: 'active', recipientAccountName: null });
      await readsScore(own, created.clientId, 77);
      expect(await own.setAutoAccept([])).toEqual({ organizationIds: [] });
    });

    test('when the organization rotates the key of a grant an account holds, then a plain ApiError with the code KEY_HELD_BY_ACCOUNT', async () => {
      const refused = await refusalOf(account.organization.authorizations.rotate(account.clientId));

      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).constructor).toBe(ApiError);
      expect(refused).toMatchObject({ status: 409, code: 'KEY_HELD_BY_ACCOUNT' });
    });

    test('when a grant is released, then it leaves the portfolio and the organization sees why; releasing again changes nothing, and a grant the account never held is AuthorizationNotFound', async () => {
      const mine = await anAccount(61);
      const own = new Portfolio({ accountKey: mine.accountKey, ...urls() });
      await eventually(async () => ((await own.summary().catch(() => undefined))?.customers === 1 ? true : undefined));

      await own.release(mine.clientId);

      expect(await mine.organization.authorizations.get(mine.clientId)).toMatchObject({
        status: 'revoked',
        revocationReason: 'released_by_recipient',
      });
      await eventually(async () => ((await all(own.customers())).length === 0 ? true : undefined));
      await expect(own.release(mine.clientId)).resolves.toBeUndefined();
      expect(await refusalOf(own.release(account.clientId))).toBeInstanceOf(AuthorizationNotFound);
    });

    test("when the account erases its own data, then erase answers the account's subject, the grant loses the account's name and the key still reads", async () => {
      const mine = await anAccount(64);
      const own = new Portfolio({ accountKey: mine.accountKey, ...urls() });
      await eventually(async () => ((await own.summary().catch(() => undefined))?.customers === 1 ? true : undefined));

      const erased = await own.erase();

      expect(erased).toEqual({ subject: `account:${mine.accountId}`, erasedAt: expect.any(String) });
      expect(await mine.organization.authorizations.get(mine.clientId)).toMatchObject({ recipientAccountName: null });
      await expect(own.erase()).resolves.toMatchObject({ subject: erased.subject });
      await expect(own.client(mine.clientId).score()).resolves.toMatchObject({ score: 64 });
    });

    test('when the account key is rotated without overlap, then the portfolio goes on with the new key and the old one is refused', async () => {
      const mine = await anAccount(72);
      const own = new Portfolio({ accountKey: mine.accountKey, ...urls() });
      await eventually(async () => ((await own.summary().catch(() => undefined))?.customers === 1 ? true : undefined));

      const rotated = await own.rotateKey({ overlapSeconds: 0 });

      expect(rotated.accountKey).toMatch(/^rsa_/);
      expect(rotated.accountKey).not.toBe(mine.accountKey);
      expect(rotated.previousKeyExpiresAt).toBeNull();
      // Once the read API has the rotation's event: the new key reads, the old one does not.
      await eventually(async () => ((await own.summary().catch(() => undefined))?.customers === 1 ? true : undefined));
      const old = new Portfolio({ accountKey: mine.accountKey, ...urls() });
      await eventually(async () => ((await refusalOf(old.summary())) instanceof InvalidApiKey ? true : undefined));
      await expect(own.client(mine.clientId).score()).resolves.toMatchObject({ score: 72 });
    });

    test('when the account key is rotated with an overlap, then the old key still reads but rotating again with it is KeyReadOnly', async () => {
      const mine = await anAccount(73);
      const own = new Portfolio({ accountKey: mine.accountKey, ...urls() });
      const old = new Portfolio({ accountKey: mine.accountKey, ...urls() });
      await eventually(async () => ((await own.summary().catch(() => undefined))?.customers === 1 ? true : undefined));

      await own.rotateKey({ overlapSeconds: 3600 });

      await expect(old.summary()).resolves.toMatchObject({ customers: 1 });
      const refused = await refusalOf(old.rotateKey({ overlapSeconds: 0 }));
      expect(refused).toBeInstanceOf(KeyReadOnly);
      expect(refused).toMatchObject({ status: 403, code: 'KEY_READ_ONLY' });
    });
  });

  /**
   * Decision 45's whole lifecycle through one `Webhooks` class, on any owner: `owner` gives its webhooks,
   * `change` makes the product send it a `score.updated`, and the delivery names `clientId`.
   */
  async function lifecycle(webhooks: Webhooks, change: (score: number) => Promise<void>, clientId: string): Promise<void> {
    const first = await aReceiver();
    const second = await aReceiver();

    // Created, then moved to another receiver with conditions: a score change below 60 only.
    const created = await webhooks.create(first.url, ['score.updated']);
    expect(created).toMatchObject({ id: expect.stringMatching(/^wh_/), url: first.url, status: 'active', conditions: {} });
    const changes = { url: second.url, events: ['score.updated', 'authorization.ended'], conditions: { scoreBelow: 60 } } as const;
    const updated = await webhooks.update(created.id, { ...changes, events: [...changes.events] });
    const { secret: _secret, ...shown } = created;
    expect(updated).toEqual({ ...shown, ...changes });
    expect(await webhooks.list()).toEqual([updated]);

    // Paused: a test is refused until it is enabled again.
    expect(await webhooks.update(created.id, { enabled: false })).toMatchObject({ status: 'paused' });
    expect(await refusalOf(webhooks.test(created.id))).toBeInstanceOf(WebhookNotActive);
    expect(await webhooks.update(created.id, { enabled: true })).toMatchObject({ status: 'active' });

    // Rotated with an overlap: a test delivery carries both signatures, each of which verifies.
    const secret = await webhooks.rotateSecret(created.id, { overlapSeconds: 600 });
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(created.secret);
    const messageId = await webhooks.test(created.id);
    const tested = await delivery(second, 0);
    expect(tested.headers['webhook-id']).toBe(messageId);
    expect(String(tested.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(secret, tested.headers, tested.body)).toMatchObject({ type: 'webhook.test', data: { webhookId: created.id } });
    expect(verifyWebhook(created.secret, tested.headers, tested.body)).toMatchObject({ type: 'webhook.test' });
    expect([verifiesWith(tested, secret), verifiesWith(tested, created.secret)]).toEqual([true, true]);

    // A change above the condition's 60 is not delivered; one below it is.
    await change(75);
    await change(41);
    const changed = await delivery(second, 1);
    expect(verifyWebhook(secret, changed.headers, changed.body)).toMatchObject({ type: 'score.updated', data: { clientId, score: 41 } });
    expect(verifiesWith(changed, secret)).toBe(true);

    // Redelivered: the same webhook-id and body again, signed again.
    const attempts = await eventually(async () => {
      const listed = await webhooks.deliveries(created.id);
      return listed.some((attempt) => attempt.messageId === changed.headers['webhook-id'] && attempt.status === 'succeeded')
        ? listed
        : undefined;
    });
    expect(attempts.map((attempt) => attempt.eventType).sort()).toEqual(['score.updated', 'webhook.test']);
    expect(await webhooks.redeliver(created.id, String(changed.headers['webhook-id']))).toBe(changed.headers['webhook-id']);
    const again = await delivery(second, 2);
    expect([again.headers['webhook-id'], again.body]).toEqual([changed.headers['webhook-id'], changed.body]);
    expect(verifiesWith(again, secret)).toBe(true);
    expect(await refusalOf(webhooks.redeliver(created.id, 'msg_0000000000000000'))).toBeInstanceOf(WebhookMessageNotFound);
    expect(first.received).toEqual([]);
    expect(second.received).toHaveLength(3);

    await webhooks.delete(created.id);
    expect(await webhooks.list()).toEqual([]);
    expect(await refusalOf(webhooks.deliveries(created.id))).toBeInstanceOf(WebhookNotFound);
    expect(await refusalOf(webhooks.delete(created.id))).toBeInstanceOf(WebhookNotFound);
  }

  describe('the webhook lifecycle', () => {
    test("when a grant's webhook is created, changed, paused, re-enabled, rotated, tested, redelivered and deleted, then each step does what it says", async () => {
      const { id, organization } = await anOrganization();
      const created = await organization.authorizations.create({ recipientType: 'auditor', scopes: ['qr_score'] });
      const client = new Client({ clientId: created.clientId, apiKey: created.apiKey, ...urls() });
      // The notifier follows the event log too.
      await eventually(() => client.webhooks.list().catch(() => undefined));
      let day = FIRST_SCORE_DAYS_AGO;

      await lifecycle(
        client.webhooks,
        (score) => organization.publishScores([aScore(id, score, (day -= 1))]).then(() => undefined),
        created.clientId,
      );
    }, 60_000);

    test("when a portfolio's webhook goes through the same lifecycle, then its deliveries name the grant they are about", async () => {
      const account = await anAccount(80);
      const portfolio = new Portfolio({ accountKey: account.accountKey, ...urls() });
      await eventually(() => portfolio.webhooks.list().catch(() => undefined));
      let day = FIRST_SCORE_DAYS_AGO;

      await lifecycle(
        portfolio.webhooks,
        (score) => account.organization.publishScores([aScore(account.organizationId, score, (day -= 1))]).then(() => undefined),
        account.clientId,
      );
    }, 60_000);

    test('when an owner has as many webhooks as it may, then one more is refused with WebhookLimitReached', async () => {
      const account = await anAccount(80);
      const portfolio = new Portfolio({ accountKey: account.accountKey, ...urls() });
      const receiver = await aReceiver();
      await eventually(() => portfolio.webhooks.list().catch(() => undefined));
      for (let i = 0; i < 10; i += 1) await portfolio.webhooks.create(`${receiver.url}/${i}`, ['score.updated']);

      expect(await refusalOf(portfolio.webhooks.create(`${receiver.url}/10`, ['score.updated']))).toBeInstanceOf(WebhookLimitReached);
      expect(await portfolio.webhooks.list()).toHaveLength(10);
    });
  });

  describe("an organization's alert webhooks", () => {
    test("when an organization's webhook goes through its lifecycle, then a grant's first read arrives as authorization.first_use, naming the grant and the address", async () => {
      const { id, organization } = await anOrganization();
      const { webhooks } = organization;
      const [first, second] = [await aReceiver(), await aReceiver()];

      // Created, then moved to another receiver and to the alert this test makes happen.
      const created = await webhooks.create(first.url, ['authorization.released']);
      expect(created).toMatchObject({
        id: expect.stringMatching(/^wh_/),
        url: first.url,
        events: ['authorization.released'],
        status: 'active',
      });
      const updated = await webhooks.update(created.id, { url: second.url, events: ['authorization.first_use', 'authorization.released'] });
      expect(updated).toMatchObject({ id: created.id, url: second.url, events: ['authorization.first_use', 'authorization.released'] });
      expect(await webhooks.list()).toEqual([updated]);
      expect(await webhooks.update(created.id, { enabled: false })).toMatchObject({ status: 'paused' });
      expect(await refusalOf(webhooks.test(created.id))).toBeInstanceOf(WebhookNotActive);
      expect(await webhooks.update(created.id, { enabled: true })).toMatchObject({ status: 'active' });

      const secret = await webhooks.rotateSecret(created.id, { overlapSeconds: 600 });
      const messageId = await webhooks.test(created.id);
      const tested = await delivery(second, 0);
      expect(tested.headers['webhook-id']).toBe(messageId);
      expect(verifyWebhook(secret, tested.headers, tested.body)).toMatchObject({ type: 'webhook.test', data: { webhookId: created.id } });
      expect([verifiesWith(tested, secret), verifiesWith(tested, created.secret)]).toEqual([true, true]);

      // The alert: a grant's first successful read.
      await organization.publishScores([aScore(id, 70)]);
      const grant = await organization.authorizations.create({ recipientType: 'auditor', scopes: ['qr_score'] });
      const reader = new Client({ clientId: grant.clientId, apiKey: grant.apiKey, ...urls() });
      await eventually(() => reader.score().catch(() => undefined));
      const alert = await eventually(() => Promise.resolve(second.received[1]), 30_000);
      expect(verifyWebhook(secret, alert.headers, alert.body)).toMatchObject({
        type: 'authorization.first_use',
        data: { clientId: grant.clientId, address: expect.any(String) },
      });
      expect(verifiesWith(alert, secret)).toBe(true);

      expect(await webhooks.redeliver(created.id, String(alert.headers['webhook-id']))).toBe(alert.headers['webhook-id']);
      const again = await delivery(second, 2);
      expect([again.headers['webhook-id'], again.body]).toEqual([alert.headers['webhook-id'], alert.body]);
      const attempts = await webhooks.deliveries(created.id);
      expect(new Set(attempts.map((attempt) => attempt.eventType))).toEqual(new Set(['webhook.test', 'authorization.first_use']));
      expect(first.received).toEqual([]);

      await webhooks.delete(created.id);
      expect(await webhooks.list()).toEqual([]);
      expect(await refusalOf(webhooks.deliveries(created.id))).toBeInstanceOf(WebhookNotFound);
    }, 60_000);
  });

  /** The operations Portfolio and every owner's Webhooks call; the Organization's others are in organization.e2e.test.ts. */
  const OPERATIONS = [
    'getPortfolio',
    'listPortfolioCustomers',
    'listPortfolioScores',
    'listPortfolioPillars',
    'rotateAccountKey',
    'releaseGrant',
    'eraseAccount',
    'listPortfolioOffers',
    'acceptPortfolioOffer',
    'declinePortfolioOffer',
    'getPortfolioAutoAccept',
    'setPortfolioAutoAccept',
    'getScore',
    ...['create', 'list', 'update', 'delete', 'listDeliveries', 'rotateSecret', 'test', 'redeliver'].flatMap((verb) => {
      const [head, tail] = {
        listDeliveries: ['list', 'Deliveries'],
        rotateSecret: ['rotate', 'Secret'],
        redeliver: ['redeliver', 'Delivery'],
      }[verb] ?? [verb, verb === 'list' ? 's' : ''];
      return [`${head}Webhook${tail}`, `${head}PortfolioWebhook${tail}`, `${head}OrganizationWebhook${tail}`];
    }),
  ];

  everyAnswerDocumented(
    'Portfolio and Webhooks',
    {
      answered,
      origins: () => [product.urls.readApi, product.urls.notifier, product.urls.credentials],
      // What the SDK sent: the Organization's calls that made the grants are another suite's.
      mine: ({ url }) => url.origin !== product.urls.credentials || /^\/v1\/portfolio\//.test(url.pathname),
    },
    OPERATIONS,
  );
}
