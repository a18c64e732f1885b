import { aScoreSubmission } from '@rsd/testkit';
import type { EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';

/**
 * Decision 36: every service labels a request by its route's template on every status, errors
 * included, so a dashboard on `route="/v1/scores"` sees the 4xx beside the 202. Each service is driven
 * into its error statuses over HTTP, then its /metrics read.
 */
const ORG = 'labels-org';
const OPERATIONAL = new Set(['/healthz', '/readyz', '/metrics', '/docs', '/docs/docs-init.js', '/.well-known/jwks.json', 'unmatched']);

let dataDir: string;
let product: EmbeddedProcess;
let token: string;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-labels-'));
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

function send(url: string, init: RequestInit & { json?: unknown } = {}) {
  const { json, ...rest } = init;
  return fetch(url, json === undefined ? rest : { ...rest, body: JSON.stringify(json) }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
}

describe('route labels of http_request_duration_seconds, on every status', () => {
  test('when each service answers its successes and its errors, then every route label is a template under /v1 or an operational path, the same for both', async () => {
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
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
      status = await send(`${customer}/score`, { headers: { 'x-api-key': apiKey } });
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
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

    const labels = {
      credentials: await routeLabels(product.urls.credentials),
      scoreIngest: await routeLabels(product.urls.scoreIngest),
      readApi: await routeLabels(product.urls.readApi),
      notifier: await routeLabels(product.urls.notifier),
    };
    for (const [service, routes] of Object.entries(labels)) {
      for (const route of routes.keys()) {
        // A template names its parameters; a concrete id in a label would be unbounded cardinality.
        const template = route.startsWith('/v1/') && !route.includes(clientId) && !route.includes(ORG);
        const operational = OPERATIONAL.has(route) || route.startsWith('/console');
        expect([service, route, template || operational]).toEqual([service, route, true]);
      }
    }
    expect([...(labels.credentials.get('/v1/organizations/:organizationId/authorizations') ?? [])].sort()).toEqual([
      '201',
      '400',
      '401',
      '405',
      '415',
    ]);
    expect([...(labels.credentials.get('/v1/organizations/:organizationId/authorizations/:clientId') ?? [])]).toEqual(['404']);
    expect([...(labels.credentials.get('/v1/organizations/:organizationId/authorizations/:clientId/revoke') ?? [])]).toEqual(['401']);
    expect([...(labels.scoreIngest.get('/v1/scores') ?? [])].sort()).toEqual(['202', '400', '401', '405', '415']);
    expect([...(labels.readApi.get('/v1/customers/:clientId/score') ?? [])].sort()).toEqual(['200', '400', '401', '405']);
    expect([...(labels.readApi.get('/v1/customers/:clientId/pillars') ?? [])]).toEqual(['403']);
    expect([...(labels.notifier.get('/v1/customers/:clientId/webhooks') ?? [])].sort()).toEqual(['200', '401', '405']);
    expect([...(labels.notifier.get('/v1/customers/:clientId/webhooks/:id') ?? [])]).toEqual(['404']);
  }, 60_000);
});
