import { randomUUID } from 'node:crypto';
import { generateApiKey } from '@rsd/domain';
import { aScoreSubmission, request, type JsonResponse } from '@rsd/testkit';
import { eventually } from './embedded-process';
import * as orgAdmin from './organization-admin';
import {
  fetchDocument,
  payloadValidator,
  switchableReceivers,
  verifiesWith,
  type Received,
  type SwitchableReceiver,
} from './webhook-lifecycle';

/*
 * Decision 44's organization alerts over HTTP, on any runtime: an organization's alert webhook on the
 * notifier hears each alert once when its condition holds and not otherwise, every delivery signed
 * (checked by the official Standard Webhooks library) and valid against the notifier's `webhooks`
 * section. The product must run with TRUST_PROXY_HOPS=1 (addresses come from X-Forwarded-For), a
 * failed-authentication limit above the scenarios' failures, and WEBHOOK_ALLOW_PRIVATE_TARGETS.
 */

export interface AlertTarget {
  credentials: string;
  scoreIngest: string;
  notifier: string;
  /** Every read-API replica; reads go to each in turn. */
  readApis: string[];
  receiverHost: string;
  tokenFor(org: string): Promise<string>;
  /** The read API's key prefix (CLIENT_ID_PREFIX's keys): a well-formed key that is not the grant's. */
  keyPrefix: string;
}

/** Every raw key the scenarios made: the suites search their logs, stores and topics for them. */
export const alertSecrets: string[] = [];

const typeOf = (delivery: Received) => (JSON.parse(delivery.body) as { type: string }).type;
const dataOf = (delivery: Received) => (JSON.parse(delivery.body) as { data: Record<string, unknown> }).data;

export function alertScenarios(target: () => AlertTarget) {
  const t = () => target();
  const receivers = switchableReceivers(() => t().receiverHost);
  let validatePayload: ((delivery: Received) => string[]) | undefined;

  async function anOrganization(): Promise<{ org: string; token: string }> {
    const org = `alerts-${randomUUID().slice(0, 8)}`;
    const token = await t().tokenFor(org);
    await orgAdmin.postScore(t().scoreIngest, token, aScoreSubmission({ organizationId: org, scoreDate: '2026-11-20', score: 64 }));
    return { org, token };
  }

  const alertWebhooks = (org: string) => `${t().notifier}/v1/organizations/${org}/webhooks`;

  async function subscribe(org: string, token: string, events: string[]): Promise<{ receiver: SwitchableReceiver; secret: string }> {
    const receiver = await receivers.start();
    const created = await request(alertWebhooks(org), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events }),
    });
    expect(created).toMatchObject({ status: 201, body: { events, status: 'active', secret: expect.stringMatching(/^whsec_/) } });
    return { receiver, secret: created.body.secret as string };
  }

  let replica = 0;
  /** A read of the grant's score on the next replica, from `address`. */
  const read = (clientId: string, key: string, address: string) => {
    const readApis = t().readApis;
    replica = (replica + 1) % readApis.length;
    return request(`${readApis[replica]}/v1/customers/${clientId}/score`, { headers: { 'x-api-key': key, 'x-forwarded-for': address } });
  };

  /** The deliveries of `type` once `count` of them arrived, each signed and valid; then a pause shows no more come. */
  async function delivered(receiver: SwitchableReceiver, secret: string, type: string, count: number): Promise<Received[]> {
    validatePayload ??= payloadValidator(await fetchDocument(t().notifier));
    const validate = validatePayload;
    const ofType = () => receiver.received.filter((delivery) => typeOf(delivery) === type);
    await eventually(() => Promise.resolve(ofType().length >= count ? true : undefined), 30_000, 200);
    for (const delivery of ofType()) {
      expect(verifiesWith(delivery, secret)).toBe(true);
      expect(validate(delivery)).toEqual([]);
    }
    return ofType();
  }

  /** A new organization's webhook for `events`, and a grant of it read once from `address` (its first use). */
  async function aGrantReadOnce(events: string[], address: string) {
    const { org, token } = await anOrganization();
    const { receiver, secret } = await subscribe(org, token, events);
    const grant = await orgAdmin.createAuthorization(t().credentials, org, token, { recipientType: 'auditor', scopes: ['qr_score'] });
    alertSecrets.push(grant.apiKey);
    const first = await eventually(async () => {
      const answer = await read(grant.clientId, grant.apiKey, address);
      return answer.status === 200 ? answer : undefined;
    }, 20_000);
    return { receiver, secret, grant, first };
  }

  /**
   * Nothing more of `type` within a while: long enough for the access log and the notifier to have passed it on.
   * Fixed, for want of a witness: no runtime shows when the credentials service has observed a read (its
   * alert state is not served), and a later alert of the same webhook is no proof either, since the
   * notifier sends one owner's due deliveries side by side and the replicas publish their reads apart.
   */
  async function noMore(receiver: SwitchableReceiver, type: string, count: number): Promise<void> {
    await new Promise((settle) => setTimeout(settle, 4_000));
    expect(receiver.received.filter((delivery) => typeOf(delivery) === type)).toHaveLength(count);
  }

  return {
    cleanUp: receivers.closeAll,
    scenarios: {
      'when a grant is read for the first time, then authorization.first_use names its address, once; a second read is not news':
        async () => {
          const events = ['authorization.first_use', 'authorization.new_address'];
          const { receiver, secret, grant, first } = await aGrantReadOnce(events, '198.51.100.10');
          expect(first.status).toBe(200);
          expect((await read(grant.clientId, grant.apiKey, '198.51.100.10')).status).toBe(200);

          const [firstUse] = await delivered(receiver, secret, 'authorization.first_use', 1);
          expect(dataOf(firstUse as Received)).toEqual({ clientId: grant.clientId, address: '198.51.100.10' });
          await noMore(receiver, 'authorization.first_use', 1);
          // The first read's address is not also reported as new.
          expect(receiver.received.filter((delivery) => typeOf(delivery) === 'authorization.new_address')).toHaveLength(0);
          expect(JSON.stringify(receiver.received.map((delivery) => delivery.body))).not.toContain(grant.apiKey);
        },

      'when a grant is read from an address not seen before, then authorization.new_address names it, once; a known address and a refused read are not news':
        async () => {
          const { receiver, secret, grant } = await aGrantReadOnce(['authorization.new_address'], '198.51.100.20');
          // Let the first read reach the alerts before the next, so that the address it saw is known. Fixed,
          // for want of a witness: that read raises no alert the receiver hears, and the grant's alert state is not served.
          await new Promise((settle) => setTimeout(settle, 3_000));

          expect((await read(grant.clientId, grant.apiKey, '203.0.113.77')).status).toBe(200);
          expect((await read(grant.clientId, grant.apiKey, '203.0.113.77')).status).toBe(200);
          expect((await read(grant.clientId, grant.apiKey, '198.51.100.20')).status).toBe(200);
          const wrongKey = generateApiKey(t().keyPrefix);
          expect((await read(grant.clientId, wrongKey, '192.0.2.99')).status).toBe(401);

          const [newAddress] = await delivered(receiver, secret, 'authorization.new_address', 1);
          expect(dataOf(newAddress as Received)).toEqual({ clientId: grant.clientId, address: '203.0.113.77' });
          await noMore(receiver, 'authorization.new_address', 1);
        },

      'when 20 authentications fail against a Client ID within 5 minutes, then authorization.auth_failures says so, once; 20 more within the hour raise nothing':
        async () => {
          const { receiver, secret, grant } = await aGrantReadOnce(['authorization.auth_failures'], '198.51.100.30');

          for (let failure = 1; failure <= 19; failure += 1) {
            expect((await read(grant.clientId, generateApiKey(t().keyPrefix), '192.0.2.30')).status).toBe(401);
          }
          await noMore(receiver, 'authorization.auth_failures', 0);
          expect((await read(grant.clientId, generateApiKey(t().keyPrefix), '192.0.2.30')).status).toBe(401);
          const [alert] = await delivered(receiver, secret, 'authorization.auth_failures', 1);
          expect(dataOf(alert as Received)).toEqual({ clientId: grant.clientId, failures: 20 });

          for (let failure = 1; failure <= 20; failure += 1) {
            expect((await read(grant.clientId, generateApiKey(t().keyPrefix), '192.0.2.30')).status).toBe(401);
          }
          await noMore(receiver, 'authorization.auth_failures', 1);
        },

      'when a grant expires within 7 days, then authorization.expiring names its expiry, once; one expiring later is not news yet':
        async () => {
          const { org, token } = await anOrganization();
          const { receiver, secret } = await subscribe(org, token, ['authorization.expiring']);
          const soon = new Date(Date.now() + 3 * 86_400_000).toISOString();
          const later = new Date(Date.now() + 30 * 86_400_000).toISOString();
          const expiring = await orgAdmin.createAuthorization(t().credentials, org, token, {
            recipientType: 'auditor',
            scopes: ['qr_score'],
            expiresAt: soon,
          });
          const notYet = await orgAdmin.createAuthorization(t().credentials, org, token, {
            recipientType: 'auditor',
            scopes: ['qr_score'],
            expiresAt: later,
          });
          alertSecrets.push(expiring.apiKey, notYet.apiKey);

          const [notice] = await delivered(receiver, secret, 'authorization.expiring', 1);
          const data = dataOf(notice as Received);
          expect(data).toEqual({ clientId: expiring.clientId, expiresAt: expect.any(String) });
          expect(Date.parse(data.expiresAt as string)).toBe(Date.parse(soon));
          await noMore(receiver, 'authorization.expiring', 1);
        },

      'when a recipient releases a grant from its portfolio, then authorization.released; an organization revoking it is not an alert':
        async () => {
          const { org, token } = await anOrganization();
          const { receiver, secret } = await subscribe(org, token, ['authorization.released']);
          const json = { 'content-type': 'application/json' };
          const linked = await request(`${t().credentials}/v1/organizations/${org}/authorizations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, ...json },
            body: JSON.stringify({ recipientType: 'insurance_provider', scopes: ['qr_score'], keyDelivery: 'claimLink' }),
          });
          expect(linked.status).toBe(201);
          const claimed = await request(linked.body.claim.url as string, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ into: 'account' }),
          });
          expect(claimed.status).toBe(201);
          alertSecrets.push(claimed.body.accountKey as string, String(linked.body.claim.url).split('/').pop() ?? '');
          const revoked = await orgAdmin.createAuthorization(t().credentials, org, token, {
            recipientType: 'auditor',
            scopes: ['qr_score'],
          });
          alertSecrets.push(revoked.apiKey);

          const released = await request(`${t().credentials}/v1/portfolio/customers/${linked.body.clientId as string}`, {
            method: 'DELETE',
            headers: { 'x-api-key': claimed.body.accountKey as string },
          });
          expect([202, 204]).toContain(released.status);
          const revocation: JsonResponse = await request(
            `${t().credentials}/v1/organizations/${org}/authorizations/${revoked.clientId}/revoke`,
            {
              method: 'POST',
              headers: { authorization: `Bearer ${token}` },
            },
          );
          expect(revocation.status).toBe(200);

          const [alert] = await delivered(receiver, secret, 'authorization.released', 1);
          expect(dataOf(alert as Received)).toEqual({ clientId: linked.body.clientId });
          await noMore(receiver, 'authorization.released', 1);
        },

      'when keys are reported leaked, then authorization.key_leaked for a grant whose key it was (revoked) and for one whose previous key it was (which ends alone)':
        async () => {
          const { org, token } = await anOrganization();
          const { receiver, secret } = await subscribe(org, token, ['authorization.key_leaked']);
          const current = await orgAdmin.createAuthorization(t().credentials, org, token, {
            recipientType: 'auditor',
            scopes: ['qr_score'],
          });
          const rotatedGrant = await orgAdmin.createAuthorization(t().credentials, org, token, {
            recipientType: 'auditor',
            scopes: ['qr_score'],
          });
          const rotated = await request(`${t().credentials}/v1/organizations/${org}/authorizations/${rotatedGrant.clientId}/rotate`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ overlapSeconds: 3600 }),
          });
          expect(rotated.status).toBe(200);
          alertSecrets.push(current.apiKey, rotatedGrant.apiKey, rotated.body.apiKey as string);
          const report = (key: string) =>
            request(`${t().credentials}/v1/leaked-keys`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ key }),
            });

          expect((await report(current.apiKey)).status).toBe(202);
          expect((await report(rotatedGrant.apiKey)).status).toBe(202);
          expect((await report(rotatedGrant.apiKey)).status).toBe(202);

          const alerts = await delivered(receiver, secret, 'authorization.key_leaked', 2);
          expect(alerts.map((delivery) => dataOf(delivery).clientId).sort()).toEqual([current.clientId, rotatedGrant.clientId].sort());
          await noMore(receiver, 'authorization.key_leaked', 2);
          expect(receiver.received.map((delivery) => delivery.body).join('\n')).not.toContain(rotatedGrant.apiKey);
        },

      'when an alert webhook is asked for wrongly, then the documented codes: no token, another organization, a recipient event, and a recipient cannot subscribe to alerts':
        async () => {
          const { org, token } = await anOrganization();
          const body = JSON.stringify({ url: `http://${t().receiverHost}:9/hooks`, events: ['authorization.first_use'] });
          const json = { 'content-type': 'application/json' };
          expect(await request(alertWebhooks(org), { method: 'POST', headers: json, body })).toMatchObject({
            status: 401,
            body: { code: 'INVALID_TOKEN' },
          });
          const other = await anOrganization();
          expect(
            await request(alertWebhooks(org), { method: 'POST', headers: { ...json, authorization: `Bearer ${other.token}` }, body }),
          ).toMatchObject({
            status: 403,
            body: { code: 'FORBIDDEN_ORGANIZATION' },
          });
          const scoreEvent = JSON.stringify({ url: `http://${t().receiverHost}:9/hooks`, events: ['score.updated'] });
          expect(
            await request(alertWebhooks(org), { method: 'POST', headers: { ...json, authorization: `Bearer ${token}` }, body: scoreEvent }),
          ).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', details: [{ path: 'events[0]' }] } });

          const grant = await orgAdmin.createAuthorization(t().credentials, org, token, { recipientType: 'auditor', scopes: ['qr_score'] });
          alertSecrets.push(grant.apiKey);
          const asRecipient = await eventually(async () => {
            const answer = await request(`${t().notifier}/v1/customers/${grant.clientId}/webhooks`, {
              method: 'POST',
              headers: { ...json, 'x-api-key': grant.apiKey },
              body,
            });
            return answer.status === 404 ? undefined : answer;
          }, 20_000);
          expect(asRecipient).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', details: [{ path: 'events[0]' }] } });
        },
    },
  };
}
