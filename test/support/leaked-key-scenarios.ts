import { createHash, randomUUID } from 'node:crypto';
import { generateApiKey } from '@rsd/domain';
import { aScoreSubmission, request, type JsonResponse, type SecretScanningProvider } from '@rsd/testkit';
import { eventually } from './embedded-process';
import * as orgAdmin from './organization-admin';

/*
 * Decision 43's leaked keys as GitHub and a finder report them, over HTTP, on any runtime: the
 * embedded one (one read API) and the distributed one (two read-API replicas, each of which must
 * refuse a reported key within decision 29's bound). A secret-scanning provider of the test's own
 * serves its keys on loopback (SECRET_SCANNING_KEYS_URL) and signs the reports.
 */

export interface LeakedKeyTarget {
  credentials: string;
  scoreIngest: string;
  /** Every read-API replica: a read is checked on each. */
  readApis: string[];
  tokenFor(org: string): Promise<string>;
  provider: SecretScanningProvider;
  /** FAILED_AUTH_LIMIT_PER_MINUTE the product was started with. */
  failedAuthLimitPerMinute: number;
}

/** Every raw key the scenarios made or reported: the suites search their logs, stores and topics for them. */
export const leakedKeySecrets: string[] = [];

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export function leakedKeyScenarios(target: () => LeakedKeyTarget) {
  const t = () => target();
  const json = { 'content-type': 'application/json', accept: 'application/json' };
  const bearer = async (org: string) => ({ ...json, authorization: `Bearer ${await t().tokenFor(org)}` });

  async function anOrganization(): Promise<string> {
    const org = `leak-org-${randomUUID().slice(0, 8)}`;
    await orgAdmin.postScore(t().scoreIngest, await t().tokenFor(org), aScoreSubmission({ organizationId: org, score: 64 }));
    return org;
  }

  async function aGrant(org: string, body: object = {}) {
    const created = await request(`${t().credentials}/v1/organizations/${org}/authorizations`, {
      method: 'POST',
      headers: await bearer(org),
      body: JSON.stringify({ recipientType: 'insurance_provider', scopes: ['qr_score'], ...body }),
    });
    expect(created.status).toBe(201);
    if (created.body.apiKey) leakedKeySecrets.push(created.body.apiKey);
    return created.body as { clientId: string; apiKey: string; claim?: { url: string } };
  }

  async function rotate(org: string, clientId: string): Promise<string> {
    const rotated = await request(`${t().credentials}/v1/organizations/${org}/authorizations/${clientId}/rotate`, {
      method: 'POST',
      headers: await bearer(org),
      body: JSON.stringify({ overlapSeconds: 3600 }),
    });
    expect(rotated.status).toBe(200);
    leakedKeySecrets.push(rotated.body.apiKey);
    return rotated.body.apiKey;
  }

  async function anAccount(org: string): Promise<{ accountId: string; accountKey: string }> {
    const linked = await aGrant(org, { keyDelivery: 'claimLink' });
    leakedKeySecrets.push(linked.claim?.url.split('/').pop() ?? '');
    const claimed = await request(linked.claim?.url ?? '', { method: 'POST', headers: json, body: '{"into": "account"}' });
    expect(claimed.status).toBe(201);
    leakedKeySecrets.push(claimed.body.accountKey);
    return claimed.body;
  }

  const readScore = (replica: string, clientId: string, key: string) =>
    request(`${replica}/v1/customers/${clientId}/score`, { headers: { 'x-api-key': key } });
  const readPortfolio = (replica: string, key: string) => request(`${replica}/v1/portfolio`, { headers: { 'x-api-key': key } });

  /** A read on every replica, once the events have reached it. */
  async function onEveryReplica(read: (replica: string) => Promise<JsonResponse>, status: number, timeoutMs = 10_000): Promise<void> {
    await Promise.all(
      t().readApis.map((replica) => eventually(async () => ((await read(replica)).status === status ? true : undefined), timeoutMs, 10)),
    );
  }

  /**
   * Every request here comes from 127.0.0.1, and the address's failed-authentication budget is shared
   * (in Redis on the distributed runtime) with whatever ran in the same minute before, a suite or an
   * earlier run: this waits for a window with `room` left, so the refusals below are 401s, not 429s.
   * The budget is read from the RateLimit header of a report of a string that is no key (202 either way).
   * Each look spends one of the budget, whose window is a fixed minute: looking every 5 s, the first look
   * in a new window finds it all but one.
   */
  async function withFailedAuthBudget(room: number): Promise<void> {
    await eventually(
      async () => {
        const answer = await request(`${t().credentials}/v1/leaked-keys`, { method: 'POST', headers: json, body: '{"key": "no-key"}' });
        const remaining = Number(/r=(\d+)/.exec(answer.headers.get('ratelimit') ?? '')?.[1] ?? 0);
        return answer.status === 202 && remaining >= room ? true : undefined;
      },
      // A window is a minute: a new one begins within this.
      75_000,
      5_000,
    );
  }

  function report(tokens: string[]): string {
    return JSON.stringify(
      tokens.map((token) => ({
        token,
        type: 'resilience_score_key',
        url: 'https://github.com/octo/leaky/blob/main/.env',
        source: 'content',
      })),
    );
  }

  function postReport(body: string, headers: Record<string, string> = {}) {
    return request(`${t().credentials}/v1/secret-scanning/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'github-public-key-identifier': t().provider.keyIdentifier,
        'github-public-key-signature': t().provider.sign(body),
        ...headers,
      },
      body,
    });
  }

  return {
    'when GitHub reports a live key, a rotated-out key in its overlap, an account key, an unknown key and a stray string, then each gets its label and only the live keys stop working on every replica within one second; the same report again changes nothing':
      async () => {
        await withFailedAuthBudget(100);
        const org = await anOrganization();
        const live = await aGrant(org);
        const rotated = await aGrant(org);
        const newKey = await rotate(org, rotated.clientId);
        const account = await anAccount(org);
        const unknown = generateApiKey('rsk');
        leakedKeySecrets.push(unknown);
        // Every key works on every replica before the report, the rotated-out one within its overlap.
        await onEveryReplica((replica) => readScore(replica, live.clientId, live.apiKey), 200);
        await onEveryReplica((replica) => readScore(replica, rotated.clientId, rotated.apiKey), 200);
        await onEveryReplica((replica) => readScore(replica, rotated.clientId, newKey), 200);
        await onEveryReplica((replica) => readPortfolio(replica, account.accountKey), 200);
        const tokens = [live.apiKey, rotated.apiKey, account.accountKey, unknown, 'rsk_not-one-of-ours'];
        const body = report(tokens);

        const answer = await postReport(body);
        const t0 = performance.now();

        expect(answer.status).toBe(200);
        expect(answer.body).toEqual(
          tokens.map((token, index) => ({
            token_hash: sha256(token),
            token_type: 'resilience_score_key',
            label: index < 3 ? 'true_positive' : 'false_positive',
          })),
        );
        // The revocation's bound (every replica refuses within 1 s of the 200) is the polls' deadline.
        const bound = Math.max(0, t0 + 1_000 - performance.now());
        await Promise.all([
          onEveryReplica((replica) => readScore(replica, live.clientId, live.apiKey), 401, bound),
          onEveryReplica((replica) => readScore(replica, rotated.clientId, rotated.apiKey), 401, bound),
          onEveryReplica((replica) => readPortfolio(replica, account.accountKey), 401, bound),
        ]);
        process.stderr.write(
          `[leaked keys] reported keys refused on every replica ${(performance.now() - t0).toFixed(0)} ms after the 200\n`,
        );
        for (const replica of t().readApis) {
          expect((await readScore(replica, rotated.clientId, newKey)).status).toBe(200);
          expect((await readScore(replica, live.clientId, live.apiKey)).body).toMatchObject({ code: 'CREDENTIAL_INACTIVE' });
          expect((await readScore(replica, rotated.clientId, rotated.apiKey)).body).toMatchObject({ code: 'INVALID_API_KEY' });
        }
        const record = await request(`${t().credentials}/v1/organizations/${org}/authorizations/${live.clientId}`, {
          headers: await bearer(org),
        });
        expect(record.body).toMatchObject({ status: 'revoked', revocationReason: 'key_leaked' });

        const again = await postReport(body);

        expect(again).toMatchObject({ status: 200, body: answer.body });
        for (const replica of t().readApis) expect((await readScore(replica, rotated.clientId, newKey)).status).toBe(200);
        const after = await request(`${t().credentials}/v1/organizations/${org}/authorizations/${live.clientId}`, {
          headers: await bearer(org),
        });
        // The same revocation (its use, decision 20, may still be counted in: it lags by up to a minute).
        const { usage: _usageBefore, lastUsedAt: _lastUsedBefore, ...revokedBefore } = record.body as Record<string, unknown>;
        const { usage: _usageAfter, lastUsedAt: _lastUsedAfter, ...revokedAfter } = after.body as Record<string, unknown>;
        expect(revokedAfter).toEqual(revokedBefore);
      },

    'when a report has a bad signature, none, or a key identifier the key endpoint does not list, then 401 and every key still works':
      async () => {
        await withFailedAuthBudget(20);
        const org = await anOrganization();
        const live = await aGrant(org);
        const body = report([live.apiKey]);
        const stranger = t().provider.newKey();

        const refusals = [
          await request(`${t().credentials}/v1/secret-scanning/github`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          }),
          await postReport(body, { 'github-public-key-signature': t().provider.sign(body.replace(']', ' ]')) }),
          await postReport(body, {
            'github-public-key-identifier': stranger.identifier,
            'github-public-key-signature': t().provider.sign(body, stranger),
          }),
        ];

        expect(refusals.map((refusal) => [refusal.status, refusal.body?.code])).toEqual([
          [401, 'INVALID_SIGNATURE'],
          [401, 'INVALID_SIGNATURE'],
          [401, 'INVALID_SIGNATURE'],
        ]);
        for (const replica of t().readApis) expect((await readScore(replica, live.clientId, live.apiKey)).status).toBe(200);
        const record = await request(`${t().credentials}/v1/organizations/${org}/authorizations/${live.clientId}`, {
          headers: await bearer(org),
        });
        expect(record.body).toMatchObject({ status: 'active', revocationReason: null });
      },

    'when a key is reported at POST /leaked-keys, then 202 whether it is live (it then stops working) or unknown, and 429 past the per-address limit':
      async () => {
        await withFailedAuthBudget(20);
        const org = await anOrganization();
        const live = await aGrant(org);
        await onEveryReplica((replica) => readScore(replica, live.clientId, live.apiKey), 200);
        const unknown = generateApiKey('rsk');
        leakedKeySecrets.push(unknown);
        const leaked = (key: string) =>
          request(`${t().credentials}/v1/leaked-keys`, { method: 'POST', headers: json, body: JSON.stringify({ key }) });

        expect(await leaked(live.apiKey)).toMatchObject({ status: 202, body: '' });
        expect(await leaked(unknown)).toMatchObject({ status: 202, body: '' });

        await onEveryReplica((replica) => readScore(replica, live.clientId, live.apiKey), 401, 5_000);
        // The address's budget is the read API's failed authentications too: whatever this minute has spent, it ends here.
        // The windows are fixed minutes, so one may end while this runs: at most two windows' budget before the 429.
        let answer = await leaked(unknown);
        for (let sent = 1; answer.status === 202 && sent <= 2 * t().failedAuthLimitPerMinute; sent += 1) answer = await leaked(unknown);
        expect(answer.status).toBe(429);
        expect(answer.headers.get('retry-after')).not.toBeNull();
      },
  };
}
