import { randomUUID } from 'node:crypto';
import { aScoreSubmission, request, type JsonResponse } from '@rsd/testkit';
import { eventually } from './embedded-process';
import * as orgAdmin from './organization-admin';
import { accountClaimedFrom, portfolioSecrets, type PortfolioWebhookTarget } from './portfolio-scenarios';
import { switchableReceivers, verifiesWith, type Received, type SwitchableReceiver } from './webhook-lifecycle';

/*
 * Decision 50's first two rules as a thief and the rightful holder meet them, over HTTP, on any
 * runtime: a key rotated out only reads (403 KEY_READ_ONLY for everything that manages), and webhooks
 * answer to the key that made them (disabled with the key when it is cut off or leaks; a routine
 * rotation carries them over). Each scenario makes organizations and accounts of its own; every raw
 * key and secret joins `portfolioSecrets`, which the suites search their logs, stores and topics for.
 */

const KEY_READ_ONLY = { status: 403, body: { code: 'KEY_READ_ONLY' } };

interface Hook {
  id: string;
  status: string;
  disabledReason: string | null;
}

export function keyAuthorityScenarios(target: () => PortfolioWebhookTarget) {
  const t = () => target();
  const receivers = switchableReceivers(() => t().receiverHost);
  let scoreDay = 0;

  const admin = async (org: string) => ({ authorization: `Bearer ${await t().tokenFor(org)}`, 'content-type': 'application/json' });
  const keyed = (key: string, body?: unknown) => ({
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const typeOf = (delivery: Received) => (JSON.parse(delivery.body) as { type: string }).type;
  const scoresOf = (receiver: SwitchableReceiver) => receiver.received.filter((delivery) => typeOf(delivery) === 'score.updated');

  /** A new organization with a first score. */
  async function anOrganization(): Promise<string> {
    const org = `keys-${randomUUID().slice(0, 8)}`;
    await postScore(org);
    return org;
  }

  /** A score newer than any before it: a change every webhook of the organization's grants hears of. */
  async function postScore(org: string): Promise<void> {
    scoreDay += 1;
    const scoreDate = new Date(Date.UTC(2026, 10, 1 + scoreDay)).toISOString().slice(0, 10);
    await orgAdmin.postScore(
      t().scoreIngest,
      await t().tokenFor(org),
      aScoreSubmission({ organizationId: org, scoreDate, score: 40 + scoreDay }),
    );
  }

  async function aGrant(org: string): Promise<orgAdmin.IssuedCredential> {
    const grant = await orgAdmin.createAuthorization(t().credentials, org, await t().tokenFor(org), {
      recipientType: 'insurance_provider',
      scopes: ['qr_score'],
    });
    portfolioSecrets.push(grant.apiKey);
    return grant;
  }

  /** An account opened by claiming a grant of `org` into it. */
  const anAccount = async (org: string) => accountClaimedFrom(t().credentials, org, await t().tokenFor(org));

  async function rotateGrant(org: string, clientId: string, overlapSeconds: number): Promise<string> {
    const rotated = await request(`${t().credentials}/v1/organizations/${org}/authorizations/${clientId}/rotate`, {
      method: 'POST',
      headers: await admin(org),
      body: JSON.stringify({ overlapSeconds }),
    });
    expect(rotated.status).toBe(200);
    portfolioSecrets.push(rotated.body.apiKey);
    return rotated.body.apiKey;
  }

  /** A finder's report at `/v1/leaked-keys` (decision 43): 202 whatever the key. */
  const reportLeaked = (key: string) =>
    request(`${t().credentials}/v1/leaked-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key }),
    });

  const rotateAccountKey = (key: string, body: object = {}) =>
    request(`${t().credentials}/v1/portfolio/keys/rotate`, { method: 'POST', ...keyed(key, body) });

  const receiver = receivers.start;

  /** The webhooks under `path` (`/customers/{clientId}` or `/portfolio`) on the notifier. */
  const hooks = (path: string) => `${t().notifier}/v1${path}/webhooks`;
  const call = (path: string, key: string, suffix = '', method = 'GET', body?: unknown) =>
    request(`${hooks(path)}${suffix}`, { method, ...keyed(key, body) });

  /** Once the notifier knows the key (at once on the embedded runtime, within a moment on the distributed one). */
  async function subscribe(path: string, key: string, url: string): Promise<{ id: string; secret: string }> {
    const created = await eventually(async () => {
      const answer = await call(path, key, '', 'POST', { url, events: ['score.updated'] });
      return answer.status === 201 ? answer : undefined;
    }, 20_000);
    portfolioSecrets.push(created.body.secret);
    return created.body;
  }

  /** A new organization's grant with a webhook of its own at a new receiver (`target`), and another receiver (`other`). */
  async function aGrantWebhook() {
    const org = await anOrganization();
    const grant = await aGrant(org);
    const path = `/customers/${grant.clientId}`;
    const [target, other] = [await receiver(), await receiver()];
    const webhook = await subscribe(path, grant.apiKey, target.url);
    return { org, grant, path, target, other, webhook };
  }

  /** The notifier's list as `key` sees it, once `accept` holds for it. */
  async function listedOnceTrue(path: string, key: string, accept: (webhooks: Hook[]) => boolean): Promise<Hook[]> {
    const listed = await eventually(async () => {
      const answer = await call(path, key);
      return answer.status === 200 && accept(answer.body.webhooks as Hook[]) ? answer : undefined;
    }, 20_000);
    return listed.body.webhooks as Hook[];
  }
  const find = (webhooks: Hook[], id: string) => webhooks.find((webhook) => webhook.id === id);

  /**
   * A newer score is posted; `witness` (a webhook that delivers) shows it was planned, so the others
   * have had their chance to get it too.
   */
  async function postScoreSeenBy(org: string, witness: SwitchableReceiver): Promise<void> {
    const before = scoresOf(witness).length;
    await postScore(org);
    await eventually(() => Promise.resolve(scoresOf(witness).length > before ? true : undefined), 20_000);
  }

  return {
    cleanUp: receivers.closeAll,
    scenarios: {
      'when an account key is rotated with the default overlap, then the old key only reads: rotating again, releasing a grant, answering an offer, setting auto-accept and managing a portfolio webhook answer 403 KEY_READ_ONLY, and the new key still works':
        async () => {
          const org = await anOrganization();
          const { accountId, accountKey: oldKey, clientId } = await anAccount(org);
          const offered = await request(`${t().credentials}/v1/organizations/${org}/authorizations`, {
            method: 'POST',
            headers: await admin(org),
            body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], keyDelivery: 'account', recipientAccountId: accountId }),
          });
          expect(offered.body.status).toBe('pending');
          const offer = `${t().credentials}/v1/portfolio/offers/${offered.body.clientId}`;
          const target = await receiver();
          const webhook = await subscribe('/portfolio', oldKey, target.url);
          const rotated = await rotateAccountKey(oldKey);
          expect(rotated.status).toBe(201);
          const newKey: string = rotated.body.accountKey;
          portfolioSecrets.push(newKey);
          // The notifier knows the new key: from here on it also knows the old one is the previous.
          await listedOnceTrue('/portfolio', newKey, (webhooks) => find(webhooks, webhook.id) !== undefined);
          const tested = await call('/portfolio', newKey, `/${webhook.id}/test`, 'POST');
          expect(tested.status).toBe(202);

          expect(await rotateAccountKey(oldKey, { overlapSeconds: 0 })).toMatchObject(KEY_READ_ONLY);
          expect(
            await request(`${t().credentials}/v1/portfolio/customers/${clientId}`, { method: 'DELETE', ...keyed(oldKey) }),
          ).toMatchObject(KEY_READ_ONLY);
          expect(await request(`${offer}/accept`, { method: 'POST', ...keyed(oldKey) })).toMatchObject(KEY_READ_ONLY);
          expect(await request(`${offer}/decline`, { method: 'POST', ...keyed(oldKey) })).toMatchObject(KEY_READ_ONLY);
          expect(
            await request(`${t().credentials}/v1/portfolio/auto-accept`, { method: 'PUT', ...keyed(oldKey, { organizationIds: [org] }) }),
          ).toMatchObject(KEY_READ_ONLY);
          // Reading what waits is reading: the old key lists the offer, which the new key then accepts.
          expect(await request(`${t().credentials}/v1/portfolio/offers`, keyed(oldKey))).toMatchObject({
            status: 200,
            body: { items: [{ clientId: offered.body.clientId }] },
          });
          expect((await request(`${offer}/accept`, { method: 'POST', ...keyed(newKey) })).status).toBe(200);
          const refusals = [
            await call('/portfolio', oldKey, '', 'POST', { url: target.url, events: ['score.updated'] }),
            await call('/portfolio', oldKey, `/${webhook.id}`, 'PATCH', { url: target.url }),
            await call('/portfolio', oldKey, `/${webhook.id}`, 'PATCH', { enabled: false }),
            await call('/portfolio', oldKey, `/${webhook.id}/rotate-secret`, 'POST', { overlapSeconds: 0 }),
            await call('/portfolio', oldKey, `/${webhook.id}/test`, 'POST'),
            await call('/portfolio', oldKey, `/${webhook.id}/deliveries/${tested.body.messageId}/redeliver`, 'POST'),
            await call('/portfolio', oldKey, `/${webhook.id}`, 'DELETE'),
          ];
          for (const refusal of refusals) expect(refusal).toMatchObject(KEY_READ_ONLY);

          // It still reads, here and on the read API; the new key holds the account, its webhook and its grants.
          expect(await call('/portfolio', oldKey)).toMatchObject({
            status: 200,
            body: { webhooks: [{ id: webhook.id, status: 'active' }] },
          });
          expect((await call('/portfolio', oldKey, `/${webhook.id}/deliveries`)).status).toBe(200);
          for (const replica of t().readApis) {
            expect((await request(`${replica}/v1/portfolio/scores`, keyed(oldKey))).status).toBe(200);
          }
          expect(await call('/portfolio', newKey, `/${webhook.id}`, 'PATCH', { enabled: false })).toMatchObject({
            status: 200,
            body: { status: 'paused', disabledReason: null },
          });
          const again = await rotateAccountKey(newKey, { overlapSeconds: 0 });
          expect(again.status).toBe(201);
          portfolioSecrets.push(again.body.accountKey);
        },

      'when a grant key is rotated with a 1-hour overlap, then the old key cannot change the webhook’s URL or rotate its secret (403 KEY_READ_ONLY) but still reads; the new key can':
        async () => {
          const { org, grant, path, target, other: elsewhere, webhook } = await aGrantWebhook();
          const newKey = await rotateGrant(org, grant.clientId, 3600);
          await listedOnceTrue(path, newKey, (webhooks) => find(webhooks, webhook.id) !== undefined);

          expect(await call(path, grant.apiKey, `/${webhook.id}`, 'PATCH', { url: elsewhere.url })).toMatchObject(KEY_READ_ONLY);
          expect(await call(path, grant.apiKey, `/${webhook.id}/rotate-secret`, 'POST', { overlapSeconds: 0 })).toMatchObject(
            KEY_READ_ONLY,
          );

          expect(await call(path, grant.apiKey)).toMatchObject({
            status: 200,
            body: { webhooks: [{ id: webhook.id, disabledReason: null }] },
          });
          for (const replica of t().readApis) {
            expect((await request(`${replica}/v1/customers/${grant.clientId}/score`, keyed(grant.apiKey))).status).toBe(200);
          }
          expect(await call(path, newKey, `/${webhook.id}`, 'PATCH', { url: elsewhere.url })).toMatchObject({
            status: 200,
            body: { url: elsewhere.url, status: 'active' },
          });
          // A routine rotation carried the webhook over: it goes on delivering, to where the new key pointed it.
          await postScoreSeenBy(org, elsewhere);
          expect(scoresOf(target)).toHaveLength(0);
        },

      'when an account key that made a portfolio webhook is reported leaked, then the webhook is disabled (key_leaked), gets no later score, and the current key’s holder sees it and deletes it':
        async () => {
          const org = await anOrganization();
          const { accountKey: leakedKey } = await anAccount(org);
          const [target, witnessTarget] = [await receiver(), await receiver()];
          const webhook = await subscribe('/portfolio', leakedKey, target.url);
          await postScoreSeenBy(org, target);
          const rotated = await rotateAccountKey(leakedKey);
          expect(rotated.status).toBe(201);
          const currentKey: string = rotated.body.accountKey;
          portfolioSecrets.push(currentKey);
          await listedOnceTrue('/portfolio', currentKey, (webhooks) => find(webhooks, webhook.id)?.status === 'active');

          expect((await reportLeaked(leakedKey)).status).toBe(202);

          const listed = await listedOnceTrue('/portfolio', currentKey, (webhooks) => find(webhooks, webhook.id)?.status === 'disabled');
          expect(find(listed, webhook.id)).toMatchObject({ status: 'disabled', disabledReason: 'key_leaked' });
          const delivered = scoresOf(target).length;
          // A webhook made after the report by the current key hears of the next score: the disabled one does not.
          const witness = await subscribe('/portfolio', currentKey, witnessTarget.url);
          await postScoreSeenBy(org, witnessTarget);
          expect(scoresOf(target)).toHaveLength(delivered);
          expect(await call('/portfolio', currentKey, `/${webhook.id}/test`, 'POST')).toMatchObject({
            status: 409,
            body: { code: 'WEBHOOK_NOT_ACTIVE' },
          });

          expect((await call('/portfolio', currentKey, `/${webhook.id}`, 'DELETE')).status).toBe(204);
          const left = await listedOnceTrue('/portfolio', currentKey, () => true);
          expect(left.map((hook) => hook.id)).toEqual([witness.id]);
        },

      'when grant keys are reported leaked, then their webhooks are disabled (key_leaked), and the organization’s authorization.key_leaked alert says how many':
        async () => {
          const org = await anOrganization();
          const token = await t().tokenFor(org);
          const alerts = await receiver();
          const subscribed = await request(`${t().notifier}/v1/organizations/${org}/webhooks`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ url: alerts.url, events: ['authorization.key_leaked'] }),
          });
          expect(subscribed.status).toBe(201);
          const [revokedGrant, rotatedGrant] = [await aGrant(org), await aGrant(org)];
          const target = await receiver();
          await subscribe(`/customers/${revokedGrant.clientId}`, revokedGrant.apiKey, target.url);
          const rotatedPath = `/customers/${rotatedGrant.clientId}`;
          const made = [
            await subscribe(rotatedPath, rotatedGrant.apiKey, target.url),
            await subscribe(rotatedPath, rotatedGrant.apiKey, target.url),
          ];
          const currentKey = await rotateGrant(org, rotatedGrant.clientId, 3600);
          await listedOnceTrue(rotatedPath, currentKey, (webhooks) => webhooks.length === 2);

          expect((await reportLeaked(revokedGrant.apiKey)).status).toBe(202);
          expect((await reportLeaked(rotatedGrant.apiKey)).status).toBe(202);

          const leaked = await eventually(() => Promise.resolve(alerts.received.length >= 2 ? alerts.received : undefined), 30_000);
          for (const delivery of leaked) expect(verifiesWith(delivery, subscribed.body.secret)).toBe(true);
          const said = new Map(
            leaked.map((delivery) => {
              const { data } = JSON.parse(delivery.body) as { data: { clientId: string; webhooksDisabled: number } };
              return [data.clientId, data.webhooksDisabled];
            }),
          );
          expect(said).toEqual(
            new Map([
              [revokedGrant.clientId, 1],
              [rotatedGrant.clientId, 2],
            ]),
          );
          // The previous key leaked: the current one stays, sees both disabled whichever key made them, and may set one again.
          const listed = await listedOnceTrue(rotatedPath, currentKey, (webhooks) => webhooks.every((hook) => hook.status === 'disabled'));
          expect(listed.map((hook) => hook.disabledReason)).toEqual(['key_leaked', 'key_leaked']);
          expect(await call(rotatedPath, currentKey, `/${made[0]?.id}`, 'PATCH', { enabled: true, url: target.url })).toMatchObject({
            status: 200,
            body: { status: 'active', disabledReason: null },
          });
        },

      'when an organization rotates a grant key with overlap 0, then the grant’s webhook is disabled (key_ended) and gets no later score; enabled:true alone is refused, with its URL it delivers again; a routine rotation carries it over':
        async () => {
          const { org, grant, path, target, other: witnessTarget, webhook } = await aGrantWebhook();
          await postScoreSeenBy(org, target);

          const newKey = await rotateGrant(org, grant.clientId, 0);

          const listed = await listedOnceTrue(path, newKey, (webhooks) => find(webhooks, webhook.id)?.status === 'disabled');
          expect(find(listed, webhook.id)).toMatchObject({ status: 'disabled', disabledReason: 'key_ended' });
          const delivered = scoresOf(target).length;
          await subscribe(path, newKey, witnessTarget.url);
          await postScoreSeenBy(org, witnessTarget);
          expect(scoresOf(target)).toHaveLength(delivered);

          const alone: JsonResponse = await call(path, newKey, `/${webhook.id}`, 'PATCH', { enabled: true });
          expect(alone).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', details: [{ path: 'url' }] } });
          expect(alone.body.details[0].message).toMatch(/key_ended/);
          expect(await call(path, newKey, `/${webhook.id}`, 'PATCH', { enabled: true, url: target.url })).toMatchObject({
            status: 200,
            body: { status: 'active', disabledReason: null },
          });
          await postScoreSeenBy(org, target);
          for (const delivery of scoresOf(target)) expect(verifiesWith(delivery, webhook.secret)).toBe(true);

          const routineKey = await rotateGrant(org, grant.clientId, 3600);
          await listedOnceTrue(path, routineKey, (webhooks) => find(webhooks, webhook.id)?.status === 'active');
          await postScoreSeenBy(org, target);
          expect(await call(path, routineKey)).toMatchObject({
            status: 200,
            body: {
              webhooks: expect.arrayContaining([expect.objectContaining({ id: webhook.id, status: 'active', disabledReason: null })]),
            },
          });
        },
    },
  };
}
