import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Organization, type AuditLogEntry } from '@resilience-score/client';
import { parseCsvIndependently, parseNdjson, request } from '@rsd/testkit';
import { eventually, REPO_ROOT } from './embedded-process';
import { startSwitchableReceiver } from './webhook-lifecycle';

/*
 * Decision 54's audit trail over HTTP, on any runtime: changes made through the API, the CLI (the real
 * `rsd` bin), the TypeScript SDK, by the expiry scheduler and by a leak report each appear once in the
 * organization's audit log, newest first, with the right actor; its filters hold, and its CSV and NDJSON
 * exports read the same under independent parsers. The notifier's changes (a recipient's webhook on a
 * grant, the organization's alert subscription) reach the same log, without their URLs or secrets, and so
 * does the notifier's own disabling of a webhook whose deliveries kept failing. The product must check expiry often
 * (EXPIRY_CHECK_INTERVAL_MS of a second or less).
 */

export interface AuditTarget {
  credentials: string;
  /** A notifier that may deliver to loopback (WEBHOOK_ALLOW_PRIVATE_TARGETS): the webhooks point there, and nothing is sent. */
  notifier: string;
  /** A person's token for the organization (subject `developer`), with `authorizations:write`. */
  tokenFor(org: string): Promise<string>;
  /** Makes a webhook's pending deliveries look 25 h old in the product's store (test/support/aged-deliveries.ts). */
  ageFirstAttempts(webhookId: string): Promise<void>;
}

const run = promisify(execFile);

export function auditScenarios(target: () => AuditTarget) {
  const t = () => target();

  /** The real `rsd` bin, pointed at the target with the token given; its stdout. */
  async function rsd(token: string, args: string[]): Promise<string> {
    const { stdout } = await run('node', [join(REPO_ROOT, 'tools/cli/bin/rsd.js'), ...args], {
      env: { ...process.env, RSD_CREDENTIALS_URL: t().credentials, RSD_TOKEN: token },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }

  const person = { type: 'person', id: '|developer' };

  return {
    'when grants are changed through the API, the CLI and the SDK, by the expiry scheduler and by a leak report, then each change is in the audit log once, newest first, with its actor, and the filters and exports agree':
      async () => {
        const org = `audit-${randomUUID().slice(0, 8)}`;
        const token = await t().tokenFor(org);
        const authorizations = `${t().credentials}/v1/organizations/${org}/authorizations`;
        const post = (url: string, body: object) =>
          request(url, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
        const sdk = new Organization({ token, credentialsUrl: `${t().credentials}/v1`, organizationId: org });
        const expected: { action: string; actor: object; clientId: string }[] = [];

        // The API, then the CLI revokes what the API made.
        const byApi = await post(authorizations, { recipientType: 'auditor', scopes: ['qr_score'] });
        expect(byApi.status).toBe(201);
        const apiGrant = byApi.body.clientId as string;
        expected.push({ action: 'authorization.created', actor: { ...person, via: 'api' }, clientId: apiGrant });
        await rsd(token, ['authorizations', 'revoke', '--org', org, '--client-id', apiGrant]);
        expected.push({ action: 'authorization.revoked', actor: { ...person, via: 'cli' }, clientId: apiGrant });

        // The SDK creates and rotates.
        const bySdk = await sdk.authorizations.create({ recipientType: 'partner', scopes: ['qr_score', 'score_trend'] });
        expected.push({ action: 'authorization.created', actor: { ...person, via: 'sdk' }, clientId: bySdk.clientId });
        const rotated = await sdk.authorizations.rotate(bySdk.clientId, { overlapSeconds: 0 });
        expected.push({ action: 'authorization.key_rotated', actor: { ...person, via: 'sdk' }, clientId: bySdk.clientId });

        // A leak report ends the rotated key: the reporter's change.
        const reported = await request(`${t().credentials}/v1/leaked-keys`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: rotated.apiKey }),
        });
        expect(reported.status).toBe(202);
        expected.push({
          action: 'authorization.revoked',
          actor: { type: 'reporter', id: 'secret-scanning', via: 'api' },
          clientId: bySdk.clientId,
        });

        // A grant that expires in a moment: the scheduler's change.
        const soon = await post(authorizations, {
          recipientType: 'partner',
          scopes: ['qr_score'],
          expiresAt: new Date(Date.now() + 2_000).toISOString(),
        });
        expect(soon.status).toBe(201);
        const expiring = soon.body.clientId as string;
        expected.push({ action: 'authorization.created', actor: { ...person, via: 'api' }, clientId: expiring });
        expected.push({
          action: 'authorization.expired',
          actor: { type: 'system', id: 'expiry-scheduler', via: null },
          clientId: expiring,
        });

        const everything = async () => {
          const entries: AuditLogEntry[] = [];
          for await (const entry of sdk.auditLog({ limit: 2 })) entries.push(entry);
          return entries;
        };
        const entries = await eventually(
          async () => {
            const listed = await everything();
            return listed.length >= expected.length ? listed : undefined;
          },
          30_000,
          250,
        );

        // Each once, in order (newest first), with its actor; requests and addresses for all but the system.
        expect(entries.map(({ action, actor, clientId }) => ({ action, actor, clientId }))).toEqual([...expected].reverse());
        for (const entry of entries) {
          if (entry.actor.type === 'system') expect([entry.requestId, entry.address]).toEqual([null, null]);
          else expect(entry.requestId && entry.address).toBeTruthy();
        }
        expect(JSON.stringify(entries)).not.toContain(rotated.apiKey);

        // Filters, through the SDK, the CLI and the API.
        const of = async (filters: Parameters<typeof sdk.auditLog>[0]) => {
          const found: AuditLogEntry[] = [];
          for await (const entry of sdk.auditLog(filters)) found.push(entry);
          return found.map((entry) => `${entry.action} ${entry.clientId ?? ''}`);
        };
        expect(await of({ actor: 'system' })).toEqual([`authorization.expired ${expiring}`]);
        expect(await of({ actor: 'reporter' })).toEqual([`authorization.revoked ${bySdk.clientId}`]);
        expect(await of({ action: 'authorization.created' })).toEqual(
          [apiGrant, bySdk.clientId, expiring].reverse().map((id) => `authorization.created ${id}`),
        );
        expect(await of({ clientId: apiGrant, actor: '|developer' })).toEqual([
          `authorization.revoked ${apiGrant}`,
          `authorization.created ${apiGrant}`,
        ]);
        const middle = entries[3]!.at;
        expect((await of({ from: middle })).length).toBe(entries.filter((entry) => entry.at >= middle).length);
        expect((await of({ to: middle })).length).toBe(entries.filter((entry) => entry.at < middle).length);
        const cliJson = JSON.parse(await rsd(token, ['audit-log', '--org', org, '--action', 'authorization.revoked'])) as {
          items: AuditLogEntry[];
        };
        expect(cliJson.items.map((entry) => entry.clientId)).toEqual([bySdk.clientId, apiGrant]);
        const refused = await request(`${t().credentials}/v1/organizations/${org}/audit-log?action=authorization.eaten`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect([refused.status, refused.body.code]).toEqual([400, 'INVALID_PARAMETER']);

        // The exports, read by independent parsers, hold the same entries.
        const rows = parseCsvIndependently(await rsd(token, ['audit-log', '--org', org, '--output', 'csv']));
        expect(rows[0]).toEqual(['at', 'action', 'actorType', 'actorId', 'actorVia', 'requestId', 'address', 'clientId']);
        expect(rows.slice(1)).toEqual(
          entries.map((entry) => [
            entry.at,
            entry.action,
            entry.actor.type,
            // The leading | is no formula: only =, +, - and @ (and tab, CR) are guarded.
            entry.actor.id,
            entry.actor.via ?? '',
            entry.requestId ?? '',
            entry.address ?? '',
            entry.clientId ?? '',
          ]),
        );
        expect(parseNdjson(await rsd(token, ['audit-log', '--org', org, '--output', 'ndjson']))).toEqual(entries);
      },
    "when a recipient changes its grant's webhook and the organization its alert subscription, then each change is in the organization's audit log with its actor, never the URL or a secret":
      async () => {
        const org = `audit-${randomUUID().slice(0, 8)}`;
        const token = await t().tokenFor(org);
        const call = (url: string, method: string, headers: Record<string, string>, body?: object) =>
          request<{ id?: string; secret?: string; clientId?: string; apiKey?: string }>(url, {
            method,
            headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
            ...(body ? { body: JSON.stringify(body) } : {}),
          });
        const granted = await call(
          `${t().credentials}/v1/organizations/${org}/authorizations`,
          'POST',
          { authorization: `Bearer ${token}` },
          {
            recipientType: 'auditor',
            scopes: ['qr_score'],
          },
        );
        expect(granted.status).toBe(201);
        const clientId = granted.body.clientId!;
        const target = 'http://127.0.0.1:9/audit-hooks';
        const secrets: string[] = [];

        /** Creates, changes, rotates and deletes one webhook under `base` as `headers` say: what the trail should show. */
        const lifecycle = async (base: string, headers: Record<string, string>, events: string[]) => {
          // Once the notifier's own view knows the grant: at once on the embedded runtime, within a moment on the distributed one.
          const created = await eventually(
            async () => {
              const answer = await call(base, 'POST', headers, { url: target, events });
              return answer.status === 404 ? undefined : answer;
            },
            20_000,
            250,
          );
          expect([created.status, created.body]).toEqual([201, expect.objectContaining({ id: expect.any(String) })]);
          const item = `${base}/${created.body.id}`;
          expect((await call(item, 'PATCH', headers, { enabled: false })).status).toBe(200);
          const rotated = await call(`${item}/rotate-secret`, 'POST', headers, { overlapSeconds: 0 });
          expect(rotated.status).toBe(201);
          expect((await call(item, 'DELETE', headers)).status).toBe(204);
          secrets.push(created.body.secret!, rotated.body.secret!);
        };
        await lifecycle(`${t().notifier}/v1/customers/${clientId}/webhooks`, { 'x-api-key': granted.body.apiKey! }, ['score.updated']);
        await lifecycle(
          `${t().notifier}/v1/organizations/${org}/webhooks`,
          { authorization: `Bearer ${token}`, 'user-agent': 'rsd-cli/1.0.0' },
          ['authorization.first_use'],
        );

        const recipient = { type: 'recipient', id: clientId, via: 'api' };
        const administrator = { ...person, via: 'cli' };
        const expected = [
          { action: 'authorization.created', actor: { ...person, via: 'api' }, clientId },
          ...['created', 'updated', 'secret_rotated', 'deleted'].map((verb) => ({ action: `webhook.${verb}`, actor: recipient, clientId })),
          ...['created', 'updated', 'secret_rotated', 'deleted'].map((verb) => ({
            action: `alert_subscription.${verb}`,
            actor: administrator,
            clientId: null,
          })),
        ].reverse();
        const log = `${t().credentials}/v1/organizations/${org}/audit-log`;
        const read = (query = '') =>
          call(`${log}${query}`, 'GET', { authorization: `Bearer ${token}` }) as Promise<{ status: number; body: unknown }>;
        const entries = await eventually(
          async () => {
            const page = (await read()).body as { items: AuditLogEntry[] };
            return page.items.length >= expected.length ? page.items : undefined;
          },
          30_000,
          250,
        );
        expect(entries.map(({ action, actor, clientId: grant }) => ({ action, actor, clientId: grant }))).toEqual(expected);
        for (const entry of entries) expect(entry.requestId && entry.address).toBeTruthy();
        const filtered = (await read('?action=alert_subscription.created')).body as { items: AuditLogEntry[] };
        expect(filtered.items.map((entry) => entry.action)).toEqual(['alert_subscription.created']);
        const ofGrant = (await read(`?clientId=${clientId}&actor=recipient`)).body as { items: AuditLogEntry[] };
        expect(ofGrant.items).toHaveLength(4);
        const exported = await (await fetch(log, { headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' } })).text();
        expect(parseNdjson(exported)).toEqual(entries);
        for (const secret of [...secrets, target, granted.body.apiKey!]) expect(exported).not.toContain(secret);
      },
    "when the notifier disables a grant's webhook and the organization's alert subscription after their deliveries kept failing, then each is in the audit log as webhook.disabled by the system, on no request":
      async () => {
        const org = `audit-${randomUUID().slice(0, 8)}`;
        const token = await t().tokenFor(org);
        const call = (url: string, method: string, headers: Record<string, string>, body?: object) =>
          request<{
            id?: string;
            clientId?: string;
            apiKey?: string;
            webhooks?: { id: string; status: string; disabledReason: string | null }[];
          }>(url, {
            method,
            headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
            ...(body ? { body: JSON.stringify(body) } : {}),
          });
        const administrator = { authorization: `Bearer ${token}` };
        const granted = await call(`${t().credentials}/v1/organizations/${org}/authorizations`, 'POST', administrator, {
          recipientType: 'auditor',
          scopes: ['qr_score'],
        });
        expect(granted.status).toBe(201);
        const clientId = granted.body.clientId!;
        const receiver = await startSwitchableReceiver('127.0.0.1', true);
        try {
          const owners = [
            {
              base: `${t().notifier}/v1/customers/${clientId}/webhooks`,
              headers: { 'x-api-key': granted.body.apiKey! },
              events: ['score.updated'],
              clientId,
            },
            {
              base: `${t().notifier}/v1/organizations/${org}/webhooks`,
              headers: administrator,
              events: ['authorization.first_use'],
              clientId: null,
            },
          ];
          const webhooks = [];
          for (const owner of owners) {
            // Once the notifier's own view knows the grant: at once on the embedded runtime, within a moment on the distributed one.
            const created = await eventually(
              async () => {
                const answer = await call(owner.base, 'POST', owner.headers, { url: receiver.url, events: owner.events });
                return answer.status === 404 ? undefined : answer;
              },
              20_000,
              250,
            );
            expect(created.status).toBe(201);
            const id = created.body.id!;
            // A test delivery, which the receiver refuses: its first failed attempt starts the 24 h.
            expect((await call(`${owner.base}/${id}/test`, 'POST', owner.headers)).status).toBe(202);
            webhooks.push({ ...owner, id });
          }
          await eventually(() => Promise.resolve(receiver.received.length >= owners.length ? true : undefined), 20_000, 100);
          // Aged again on every look: a retry recorded in between would have written the real start back.
          for (const webhook of webhooks) {
            const disabled = await eventually(
              async () => {
                await t().ageFirstAttempts(webhook.id);
                const listed = await call(webhook.base, 'GET', webhook.headers);
                return listed.body.webhooks?.find((found) => found.id === webhook.id && found.status === 'disabled');
              },
              45_000,
              1_000,
            );
            expect(disabled?.disabledReason).toBe('delivery_failures');
          }

          const log = `${t().credentials}/v1/organizations/${org}/audit-log?action=webhook.disabled`;
          const entries = await eventually(
            async () => {
              const items = ((await call(log, 'GET', administrator)).body as { items?: AuditLogEntry[] }).items ?? [];
              return items.length >= webhooks.length ? items : undefined;
            },
            30_000,
            250,
          );
          const system = { type: 'system', id: 'delivery-failures', via: null };
          expect(entries).toHaveLength(webhooks.length);
          expect(
            entries.map(({ action, actor, requestId, address, clientId: grant }) => ({
              action,
              actor,
              requestId,
              address,
              clientId: grant,
            })),
          ).toEqual(
            expect.arrayContaining(
              webhooks.map((webhook) => ({
                action: 'webhook.disabled',
                actor: system,
                requestId: null,
                address: null,
                clientId: webhook.clientId,
              })),
            ),
          );
        } finally {
          await receiver.close();
        }
      },
  };
}
