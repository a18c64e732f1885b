import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialsService } from '@rsd/credentials';
import * as embeddedAdapters from '@rsd/embedded';
import { notifierService } from '@rsd/notifier';
import { createLogger, DEV_JWT_SECRET, loadConfig, systemClock, UnavailableError } from '@rsd/platform';
import type { AnyServiceDefinition } from '@rsd/ports';
import { readApiService } from '@rsd/read-api';
import { embeddedRuntime, resolveSecrets, runtimeConfigSchema, type OpenedRuntime } from '@rsd/runtime';
import { scoreIngestService } from '@rsd/score-ingest';
import { generateApiKey } from '@rsd/domain';
import {
  aScoreSubmission,
  request,
  signToken,
  startApp,
  startSecretScanningProvider,
  type RunningApp,
  type SecretScanningProvider,
} from '@rsd/testkit';

// Decision 36: every 503 of every service carries Retry-After. The four declarations start on an
// embedded runtime whose event log and stores can be switched out of reach (each call then rejects
// with the ports' UnavailableError, as the Kafka, MongoDB and Redis adapters do); then every
// operation each service documents is called as a client would, with valid credentials.

const log = createLogger('test', 'silent');
const ORG = 'unavailable-org';

let dataDir: string;
let runtime: OpenedRuntime;
// Decision 43's reports are signed by a provider of the suite's own on loopback, never GitHub.
let provider: SecretScanningProvider;
let down = false;
const started: { definition: AnyServiceDefinition; app: RunningApp; stop(): Promise<void> }[] = [];

/** Every function of `target` rejects with UnavailableError while `down`; close always works. */
function outOfReachWhenDown<T extends object>(target: T, dependency: string): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function' || property === 'close') return value;
      return (...args: unknown[]) =>
        down ? Promise.reject(new UnavailableError(dependency)) : (value as (...a: unknown[]) => unknown).apply(object, args);
    },
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rsd-unavailable-'));
  const runtimeConfig = loadConfig(runtimeConfigSchema({ defaultRuntime: 'embedded', needs: [] }), { DATA_DIR: dataDir });
  const real = await embeddedRuntime(embeddedAdapters, runtimeConfig, log);
  runtime = {
    ...real,
    eventLog: outOfReachWhenDown(real.eventLog, 'event log'),
    openAuthorizationStore: async () => outOfReachWhenDown(await real.openAuthorizationStore(), 'authorizations'),
    openAuditLogStore: async () => outOfReachWhenDown(await real.openAuditLogStore(), 'audit log'),
    openViews: async (owner, views) => {
      const opened = await real.openViews(owner, views);
      return {
        ...opened,
        store: outOfReachWhenDown(opened.store, 'views'),
        reader: async (options) => {
          const reader = await opened.reader(options);
          return { ...reader, views: outOfReachWhenDown(reader.views, 'views') };
        },
      };
    },
    openWebhookStore: async () => outOfReachWhenDown(await real.openWebhookStore(), 'webhooks'),
    openOffboardingStore: async () => outOfReachWhenDown(await real.openOffboardingStore(), 'offboardings'),
  };
  const specs = [readApiService, credentialsService, scoreIngestService, notifierService].flatMap((definition) => definition.secrets ?? []);
  provider = await startSecretScanningProvider();
  const { env } = await resolveSecrets(
    [...specs, DEV_JWT_SECRET],
    { WEBHOOK_POLL_INTERVAL_MS: '50', SECRET_SCANNING_KEYS_URL: provider.keysUrl },
    dataDir,
    log,
  );
  for (const definition of [readApiService, credentialsService, scoreIngestService, notifierService] as AnyServiceDefinition[]) {
    const config: object = loadConfig(definition.configSchema, env) as object;
    const service = await definition.start({ config, runtime, clock: systemClock, log });
    await service.caughtUp;
    started.push({ definition, app: await startApp(service.app), stop: () => service.stop() });
  }
}, 30_000);

afterAll(async () => {
  for (const service of started.reverse()) {
    await service.app.close();
    await service.stop();
  }
  await runtime?.close();
  await provider?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const urlOf = (definition: AnyServiceDefinition) => started.find((service) => service.definition === definition)!.app.baseUrl;

test('when the event log and the stores are out of reach, then every operation of every service that needs them answers 503 with Retry-After', async () => {
  const secret = (await resolveSecrets([DEV_JWT_SECRET], {}, dataDir, log)).env.JWT_HS256_SECRET!;
  const bearer = {
    authorization: `Bearer ${await signToken({ org: ORG, scope: 'authorizations:write scores:write' }, { secret })}`,
    'content-type': 'application/json',
  };
  // A recipient with every scope, made while everything is in reach.
  const created = await request<{ clientId: string; apiKey: string }>(
    `${urlOf(credentialsService)}/v1/organizations/${ORG}/authorizations`,
    {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score', 'pillar_breakdown', 'score_trend'] }),
    },
  );
  expect(created.status).toBe(201);
  const { clientId, apiKey } = created.body;
  const recipient = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const authorization = `${urlOf(credentialsService)}/v1/organizations/${ORG}/authorizations/${clientId}`;
  const customer = (definition: AnyServiceDefinition) => `${urlOf(definition)}/v1/customers/${clientId}`;
  // Decision 38: an authorization whose key waits for its claim link.
  const linked = await request<{ clientId: string; claim: { url: string } }>(
    `${urlOf(credentialsService)}/v1/organizations/${ORG}/authorizations`,
    { method: 'POST', headers: bearer, body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], keyDelivery: 'claimLink' }) },
  );
  expect(linked.status).toBe(201);
  const claimJson = { accept: 'application/json', 'content-type': 'application/json' };
  // Decision 42: a recipient account, opened by claiming another link into it.
  const forAccount = await request<{ claim: { url: string } }>(`${urlOf(credentialsService)}/v1/organizations/${ORG}/authorizations`, {
    method: 'POST',
    headers: bearer,
    body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], keyDelivery: 'claimLink' }),
  });
  const opened = await request<{ accountKey: string; clientId: string }>(forAccount.body.claim.url, {
    method: 'POST',
    headers: claimJson,
    body: JSON.stringify({ into: 'account' }),
  });
  expect(opened.status).toBe(201);
  const account = { 'x-api-key': opened.body.accountKey, 'content-type': 'application/json' };
  const portfolio = `${urlOf(readApiService)}/v1/portfolio`;
  const portfolioHooks = `${urlOf(notifierService)}/v1/portfolio/webhooks`;

  // operationId → the request a client makes for it.
  const calls: Record<string, [string, RequestInit]> = {
    getScore: [`${customer(readApiService)}/score`, { headers: recipient }],
    getPillars: [`${customer(readApiService)}/pillars`, { headers: recipient }],
    getCertificate: [`${customer(readApiService)}/certificate`, { headers: recipient }],
    listScoreHistory: [`${customer(readApiService)}/score/history`, { headers: recipient }],
    createAuthorization: [
      `${urlOf(credentialsService)}/v1/organizations/${ORG}/authorizations`,
      { method: 'POST', headers: bearer, body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'] }) },
    ],
    listAuthorizations: [`${urlOf(credentialsService)}/v1/organizations/${ORG}/authorizations`, { headers: bearer }],
    getAuthorization: [authorization, { headers: bearer }],
    revokeAuthorization: [`${authorization}/revoke`, { method: 'POST', headers: bearer }],
    rotateAuthorizationKey: [`${authorization}/rotate`, { method: 'POST', headers: bearer, body: '{}' }],
    listAccessLog: [`${authorization}/access-log`, { headers: bearer }],
    listDailyReads: [`${authorization}/daily-reads`, { headers: bearer }],
    listAlerts: [`${urlOf(credentialsService)}/v1/organizations/${ORG}/alerts`, { headers: bearer }],
    listAuditLog: [`${urlOf(credentialsService)}/v1/organizations/${ORG}/audit-log`, { headers: bearer }],
    issueClaimLink: [
      `${urlOf(credentialsService)}/v1/organizations/${ORG}/authorizations/${linked.body.clientId}/claim-link`,
      { method: 'POST', headers: bearer, body: '{}' },
    ],
    describeClaim: [linked.body.claim.url, { headers: claimJson }],
    claimKey: [linked.body.claim.url, { method: 'POST', headers: claimJson, body: '{}' }],
    submitScores: [
      `${urlOf(scoreIngestService)}/v1/scores`,
      { method: 'POST', headers: bearer, body: JSON.stringify(aScoreSubmission({ organizationId: ORG })) },
    ],
    createWebhook: [
      `${customer(notifierService)}/webhooks`,
      { method: 'POST', headers: recipient, body: JSON.stringify({ url: 'https://203.0.113.7/hook', events: ['score.updated'] }) },
    ],
    listWebhooks: [`${customer(notifierService)}/webhooks`, { headers: recipient }],
    deleteWebhook: [`${customer(notifierService)}/webhooks/wh_${'0'.repeat(24)}`, { method: 'DELETE', headers: recipient }],
    getPortfolio: [portfolio, { headers: account }],
    listPortfolioCustomers: [`${portfolio}/customers`, { headers: account }],
    listPortfolioScores: [`${portfolio}/scores`, { headers: account }],
    listPortfolioPillars: [`${portfolio}/pillars`, { headers: account }],
    listPortfolioCertificates: [`${portfolio}/certificates`, { headers: account }],
    rotateAccountKey: [`${urlOf(credentialsService)}/v1/portfolio/keys/rotate`, { method: 'POST', headers: account, body: '{}' }],
    releaseGrant: [`${urlOf(credentialsService)}/v1/portfolio/customers/${opened.body.clientId}`, { method: 'DELETE', headers: account }],
    listWebhookDeliveries: [`${customer(notifierService)}/webhooks/wh_${'0'.repeat(24)}/deliveries`, { headers: recipient }],
    updateWebhook: [
      `${customer(notifierService)}/webhooks/wh_${'0'.repeat(24)}`,
      { method: 'PATCH', headers: recipient, body: JSON.stringify({ enabled: true }) },
    ],
    rotateWebhookSecret: [
      `${customer(notifierService)}/webhooks/wh_${'0'.repeat(24)}/rotate-secret`,
      { method: 'POST', headers: recipient, body: JSON.stringify({ overlapSeconds: 60 }) },
    ],
    testWebhook: [`${customer(notifierService)}/webhooks/wh_${'0'.repeat(24)}/test`, { method: 'POST', headers: recipient }],
    redeliverWebhookDelivery: [
      `${customer(notifierService)}/webhooks/wh_${'0'.repeat(24)}/deliveries/msg_${'0'.repeat(24)}/redeliver`,
      { method: 'POST', headers: recipient },
    ],
    // Decision 42: the portfolio's webhooks, the same lifecycle under /portfolio with the account key.
    createPortfolioWebhook: [
      `${portfolioHooks}`,
      { method: 'POST', headers: account, body: JSON.stringify({ url: 'https://203.0.113.7/hook', events: ['score.updated'] }) },
    ],
    listPortfolioWebhooks: [portfolioHooks, { headers: account }],
    deletePortfolioWebhook: [`${portfolioHooks}/wh_${'0'.repeat(24)}`, { method: 'DELETE', headers: account }],
    listPortfolioWebhookDeliveries: [`${portfolioHooks}/wh_${'0'.repeat(24)}/deliveries`, { headers: account }],
    updatePortfolioWebhook: [
      `${portfolioHooks}/wh_${'0'.repeat(24)}`,
      { method: 'PATCH', headers: account, body: JSON.stringify({ enabled: true }) },
    ],
    rotatePortfolioWebhookSecret: [
      `${portfolioHooks}/wh_${'0'.repeat(24)}/rotate-secret`,
      { method: 'POST', headers: account, body: JSON.stringify({ overlapSeconds: 60 }) },
    ],
    testPortfolioWebhook: [`${portfolioHooks}/wh_${'0'.repeat(24)}/test`, { method: 'POST', headers: account }],
    redeliverPortfolioWebhookDelivery: [
      `${portfolioHooks}/wh_${'0'.repeat(24)}/deliveries/msg_${'0'.repeat(24)}/redeliver`,
      { method: 'POST', headers: account },
    ],
  };
  // Decision 44: an organization's alert webhooks, the same lifecycle with the administrator's token. Its token
  // needs no store, so a create reaches the target's check: a public address (a documentation range is refused).
  const organizationHooks = `${urlOf(notifierService)}/v1/organizations/${ORG}/webhooks`;
  const unknownHook = `${organizationHooks}/wh_${'0'.repeat(24)}`;
  Object.assign(calls, {
    createOrganizationWebhook: [
      organizationHooks,
      { method: 'POST', headers: bearer, body: JSON.stringify({ url: 'https://93.184.216.34/hook', events: ['authorization.first_use'] }) },
    ],
    listOrganizationWebhooks: [organizationHooks, { headers: bearer }],
    deleteOrganizationWebhook: [unknownHook, { method: 'DELETE', headers: bearer }],
    listOrganizationWebhookDeliveries: [`${unknownHook}/deliveries`, { headers: bearer }],
    updateOrganizationWebhook: [unknownHook, { method: 'PATCH', headers: bearer, body: JSON.stringify({ enabled: true }) }],
    rotateOrganizationWebhookSecret: [
      `${unknownHook}/rotate-secret`,
      { method: 'POST', headers: bearer, body: JSON.stringify({ overlapSeconds: 60 }) },
    ],
    testOrganizationWebhook: [`${unknownHook}/test`, { method: 'POST', headers: bearer }],
    redeliverOrganizationWebhookDelivery: [
      `${unknownHook}/deliveries/msg_${'0'.repeat(24)}/redeliver`,
      { method: 'POST', headers: bearer },
    ],
  });
  // Decision 50: the account's offers and its answers to them (the one it was opened with stands in for an offer: the
  // account's key is looked up first), and the organizations whose offers it accepts as they are made.
  const credentialsPortfolio = `${urlOf(credentialsService)}/v1/portfolio`;
  Object.assign(calls, {
    listPortfolioOffers: [`${credentialsPortfolio}/offers`, { headers: account }],
    acceptPortfolioOffer: [`${credentialsPortfolio}/offers/${opened.body.clientId}/accept`, { method: 'POST', headers: account }],
    declinePortfolioOffer: [`${credentialsPortfolio}/offers/${opened.body.clientId}/decline`, { method: 'POST', headers: account }],
    getPortfolioAutoAccept: [`${credentialsPortfolio}/auto-accept`, { headers: account }],
    setPortfolioAutoAccept: [
      `${credentialsPortfolio}/auto-accept`,
      { method: 'PUT', headers: account, body: JSON.stringify({ organizationIds: [ORG] }) },
    ],
  });
  // Decision 43: a leaked key reported by anyone, and by a signed secret-scanning report, is looked up in the store.
  const leakedKey = JSON.stringify({ key: generateApiKey('rsk') });
  const report = JSON.stringify([{ token: generateApiKey('rsk'), type: 'rsd_api_key', url: 'https://github.com/o/r', source: 'content' }]);
  Object.assign(calls, {
    reportLeakedKey: [
      `${urlOf(credentialsService)}/v1/leaked-keys`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: leakedKey },
    ],
    reportSecretScanningTokens: [
      `${urlOf(credentialsService)}/v1/secret-scanning/github`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'github-public-key-identifier': provider.keyIdentifier,
          'github-public-key-signature': provider.sign(report),
        },
        body: report,
      },
    ],
  });
  // Decision 54: access reviews are read and written in the store (a review id of the right form that no store holds).
  const reviews = `${urlOf(credentialsService)}/v1/organizations/${ORG}/access-reviews`;
  const reviewId = 'arv_000000000000000000000000';
  Object.assign(calls, {
    createAccessReview: [
      reviews,
      {
        method: 'POST',
        headers: bearer,
        body: JSON.stringify({ dueAt: new Date(Date.now() + 86_400_000).toISOString(), onOverdue: 'keep' }),
      },
    ],
    listAccessReviews: [reviews, { headers: bearer }],
    getAccessReview: [`${reviews}/${reviewId}`, { headers: bearer }],
    getAccessReviewReport: [`${reviews}/${reviewId}/report`, { headers: bearer }],
    decideAccessReviewItem: [
      `${reviews}/${reviewId}/items/${created.body.clientId}`,
      { method: 'PUT', headers: bearer, body: JSON.stringify({ decision: 'keep' }) },
    ],
  });
  // Decision 56: offboarding and erasure (the organization's, its grant's recipient's, and the account's own).
  const offboarder = {
    authorization: `Bearer ${await signToken({ org: ORG, scope: 'organizations:delete' }, { secret })}`,
  };
  Object.assign(calls, {
    offboardOrganization: [
      `${urlOf(credentialsService)}/v1/organizations/${ORG}?confirm=${ORG}`,
      { method: 'DELETE', headers: offboarder },
    ],
    getOffboarding: [`${urlOf(credentialsService)}/v1/organizations/${ORG}/offboarding`, { headers: offboarder }],
    eraseRecipient: [`${authorization}/erasure`, { method: 'POST', headers: bearer }],
    eraseAccount: [`${urlOf(credentialsService)}/v1/portfolio/erasure`, { method: 'POST', headers: account }],
  });
  // Every documented operation is called, the JWKS aside: it needs no store.
  const documented: string[] = [];
  for (const { app } of started) {
    const document = (await request<{ paths: Record<string, Record<string, { operationId: string }>> }>(`${app.baseUrl}/v1/openapi.json`))
      .body;
    for (const operations of Object.values(document.paths)) {
      // A path item may name its own `servers` beside its operations (the JWKS, the claim links).
      documented.push(...Object.entries(operations).flatMap(([key, op]) => (key === 'servers' ? [] : [op.operationId])));
    }
  }
  expect(documented.filter((id) => id !== 'getSigningKeys').sort()).toEqual(Object.keys(calls).sort());

  down = true;
  try {
    const answers = await Promise.all(
      Object.entries(calls).map(async ([operationId, [url, init]]) => {
        const answer = await request<{ code?: string }>(url, init);
        return [operationId, answer.status, answer.body.code, answer.headers.get('retry-after')];
      }),
    );
    for (const [operationId, status, code, retryAfter] of answers) {
      expect([operationId, status, code, retryAfter]).toEqual([
        operationId,
        503,
        'SERVICE_UNAVAILABLE',
        expect.stringMatching(/^[1-9]\d*$/),
      ]);
    }
  } finally {
    down = false;
  }
});
