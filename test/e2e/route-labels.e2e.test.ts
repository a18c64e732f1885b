import { aScoreSubmission, eventually } from '@rsd/testkit';
import type { EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';

// Decision 36: every service labels a request by its route's template on every status, errors
// included, so a dashboard on `route="/v1/scores"` sees the 4xx beside the 202. Each service is driven
// into its error statuses over HTTP, then its /metrics read.

const ORG = 'labels-org';
/** Small enough that one credential reaches its 429 in a burst, large enough for the rest of the test's reads. */
const RATE_LIMIT = 60;
/** What every service serves besides its documented API, labelled as it is mounted; `unmatched` is any path no route has. */
const OPERATIONAL = ['/healthz', '/readyz', '/metrics', '/docs', '/docs/docs-init.js', '/v1/openapi.json', 'unmatched'];

let dataDir: string;
let product: EmbeddedProcess;
let token: string;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-labels-', { RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) }));
  token = await devTokenFor(dataDir, ORG);
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

/** `route` → the statuses /metrics counted for it, from the latency histogram's `_count` series. */
async function routeLabels(base: string): Promise<Map<string, Set<string>>> {
  const text = (await (await fetch(`${base}/metrics`)).text()).split('\n');
  const routes = new Map<string, Set<string>>();
  for (const line of text) {
    if (!line.startsWith('http_request_duration_seconds_count{')) continue;
    const route = /route="([^"]*)"/.exec(line)?.[1];
    const status = /status="([^"]*)"/.exec(line)?.[1];
    if (route === undefined || status === undefined) throw new Error(`a series without route or status: ${line}`);
    routes.set(route, (routes.get(route) ?? new Set()).add(status));
  }
  return routes;
}

interface Servers {
  servers?: { url: string }[];
}

/**
 * The express templates of the operations a service documents: each path under the server it names
 * (the operation's, else the path's, else the document's), `{clientId}` as `:clientId`; so
 * `/customers/{clientId}/score` under `/v1` is `/v1/customers/:clientId/score`.
 */
async function documentedTemplates(base: string): Promise<Set<string>> {
  const document = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Servers & {
    paths: Record<string, Servers & Record<string, unknown>>;
  };
  const prefixOf = (...levels: (Servers | undefined)[]) => {
    const url = levels.find((level) => level?.servers?.length)?.servers?.[0]?.url ?? '/';
    return new URL(url, 'http://server.invalid').pathname.replace(/\/+$/, '');
  };
  const templates = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']) {
      const operation = item[method] as Servers | undefined;
      if (operation) templates.add(`${prefixOf(operation, item, document)}${path}`.replace(/\{([^}]+)\}/g, ':$1'));
    }
  }
  return templates;
}

function send(url: string, init: RequestInit & { json?: unknown } = {}) {
  const { json, ...rest } = init;
  return fetch(url, json === undefined ? rest : { ...rest, body: JSON.stringify(json) }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
}

describe('route labels of http_request_duration_seconds, on every status', () => {
  test('when each service answers its successes and its errors, then every route label is a template the service documents, an operational path or `unmatched`, a 429 included', async () => {
    const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const collection = `${product.urls.credentials}/v1/organizations/${ORG}/authorizations`;

    // Credentials: 201, 400, 401, 404, 405, 415.
    const { clientId, apiKey } = await orgAdmin.createAuthorization(product.urls.credentials, ORG, token, {
      recipientType: 'insurance_provider',
      recipientName: 'Labels Insurance',
      scopes: ['qr_score'],
    });
    expect(
      await Promise.all([
        send(collection, { method: 'POST', headers: bearer, json: { recipientType: 'nobody' } }),
        send(collection, { method: 'POST', headers: { 'content-type': 'application/json' }, json: {} }),
        send(collection, { method: 'POST', headers: { ...bearer, 'content-type': 'text/plain' }, body: 'x' }),
        send(`${collection}/rs_${'0'.repeat(20)}`, { headers: bearer }),
        send(collection, { method: 'PUT', headers: bearer }),
        send(`${collection}/${clientId}/revoke`, { method: 'POST' }),
      ]),
    ).toEqual([400, 401, 415, 404, 405, 401]);

    // Score ingest: 202, 400, 401, 405, 415.
    const scores = `${product.urls.scoreIngest}/v1/scores`;
    expect(
      await Promise.all([
        send(scores, { method: 'POST', headers: bearer, json: aScoreSubmission({ organizationId: ORG }) }),
        send(scores, { method: 'POST', headers: bearer, json: { score: 'high' } }),
        send(scores, { method: 'POST', json: {} }),
        send(scores, { method: 'GET', headers: bearer }),
        send(scores, { method: 'POST', headers: { ...bearer, 'content-type': 'text/plain' }, body: 'x' }),
      ]),
    ).toEqual([202, 400, 401, 405, 415]);

    // Read API: 200 (once the score is projected), 400, 401, 404, 405.
    const customer = `${product.urls.readApi}/v1/customers/${clientId}`;
    await eventually(async () => expect(await send(`${customer}/score`, { headers: { 'x-api-key': apiKey } })).toBe(200), {
      timeoutMs: 5_000,
      intervalMs: 100,
    });
    expect(
      await Promise.all([
        send(`${product.urls.readApi}/v1/customers/not-a-client-id/score`, { headers: { 'x-api-key': apiKey } }),
        send(`${customer}/score`),
        send(`${customer}/pillars`, { headers: { 'x-api-key': apiKey } }),
        send(`${customer}/score`, { method: 'POST', headers: { 'x-api-key': apiKey } }),
        send(`${product.urls.readApi}/v1/nothing-here`),
      ]),
    ).toEqual([400, 401, 403, 405, 404]);

    // Notifier: 200, 401, 404, 405.
    const webhooks = `${product.urls.notifier}/v1/customers/${clientId}/webhooks`;
    expect(
      await Promise.all([
        send(webhooks, { headers: { 'x-api-key': apiKey } }),
        send(webhooks),
        send(`${webhooks}/wh_${'0'.repeat(20)}`, { method: 'DELETE', headers: { 'x-api-key': apiKey } }),
        send(webhooks, { method: 'PUT', headers: { 'x-api-key': apiKey } }),
      ]),
    ).toEqual([200, 401, 404, 405]);

    // The read API's 429: a credential of its own spends its minute in one burst.
    const limited = await orgAdmin.createAuthorization(product.urls.credentials, ORG, token, {
      recipientType: 'auditor',
      recipientName: 'Labels Audit',
      scopes: ['qr_score'],
    });
    const burst = await Promise.all(
      Array.from({ length: RATE_LIMIT + 5 }, () =>
        send(`${product.urls.readApi}/v1/customers/${limited.clientId}/score`, { headers: { 'x-api-key': limited.apiKey } }),
      ),
    );
    expect(burst).toContain(429);

    // A path no route has, on every service: 404, labelled `unmatched`.
    const services = {
      credentials: product.urls.credentials,
      scoreIngest: product.urls.scoreIngest,
      readApi: product.urls.readApi,
      notifier: product.urls.notifier,
    };
    for (const base of Object.values(services)) {
      expect(await send(`${base}/v1/no-such-path/${clientId}`)).toBe(404);
      expect(await send(`${base}/no-such-path`, { method: 'POST' })).toBe(404);
    }

    const labels: Record<string, Map<string, Set<string>>> = {};
    const templates: Record<string, Set<string>> = {};
    for (const [service, base] of Object.entries(services)) {
      labels[service] = await routeLabels(base);
      templates[service] = await documentedTemplates(base);
    }
    for (const [service, routes] of Object.entries(labels)) {
      // Exactly a template the service documents (so no concrete id: unbounded cardinality), or an operational path.
      const allowed = new Set([...templates[service]!, ...OPERATIONAL]);
      const foreign = [...routes.keys()].filter(
        (route) => !allowed.has(route) && !(service === 'credentials' && route.startsWith('/console')),
      );
      expect([service, foreign]).toEqual([service, []]);
      // The unknown paths above, and only those among this test's requests, are `unmatched`.
      expect([service, [...(routes.get('unmatched') ?? [])]]).toEqual([service, ['404']]);
    }
    expect(templates.readApi).toContain('/v1/customers/:clientId/score');
    expect(templates.credentials).toContain('/v1/organizations/:organizationId/authorizations');
    expect([...(labels.credentials!.get('/v1/organizations/:organizationId/authorizations') ?? [])].sort()).toEqual([
      '201',
      '400',
      '401',
      '405',
      '415',
    ]);
    expect([...(labels.credentials!.get('/v1/organizations/:organizationId/authorizations/:clientId') ?? [])]).toEqual(['404']);
    expect([...(labels.credentials!.get('/v1/organizations/:organizationId/authorizations/:clientId/revoke') ?? [])]).toEqual(['401']);
    expect([...(labels.scoreIngest!.get('/v1/scores') ?? [])].sort()).toEqual(['202', '400', '401', '405', '415']);
    expect([...(labels.readApi!.get('/v1/customers/:clientId/score') ?? [])].sort()).toEqual(['200', '400', '401', '405', '429']);
    expect([...(labels.readApi!.get('/v1/customers/:clientId/pillars') ?? [])]).toEqual(['403']);
    expect([...(labels.notifier!.get('/v1/customers/:clientId/webhooks') ?? [])].sort()).toEqual(['200', '401', '405']);
    expect([...(labels.notifier!.get('/v1/customers/:clientId/webhooks/:id') ?? [])]).toEqual(['404']);
  }, 60_000);
});
