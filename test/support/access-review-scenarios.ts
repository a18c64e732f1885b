import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { aScoreSubmission, parseCsvIndependently, request } from '@rsd/testkit';
import { eventually, runRsd } from './embedded-process';
import { createAuthorization, postScore } from './organization-admin';
import { startSwitchableReceiver, type SwitchableReceiver } from './webhook-lifecycle';

/*
 * Decision 54's access reviews over HTTP, on any runtime: a review over 50 grants, some kept and some
 * revoked by a reviewer, the rest revoked at the due time by its `onOverdue: "revoke"`
 * (`revocationReason: "access_review"`); the refusals; the audit trail; the report signed as
 * certificates are, checked by the real `rsd verify` online and against a saved key set, one changed
 * byte failing; and its CSV read back by an independent parser. The product must look at reviews
 * often (ACCESS_REVIEW_CHECK_INTERVAL_MS of a second or less).
 */

export interface AccessReviewTarget {
  credentials: string;
  readApi: string;
  scoreIngest: string;
  notifier: string;
  /** Where the notifier reaches this test's webhook receiver (WEBHOOK_ALLOW_PRIVATE_TARGETS on the product). */
  receiverHost: string;
  /** A person's token for the organization (subject `developer`), with `authorizations:write` and `scores:write`. */
  tokenFor(org: string): Promise<string>;
}

const GRANTS = 50;
const KEPT = 10;
const REVOKED = 10;

export function accessReviewScenarios(target: () => AccessReviewTarget) {
  const t = () => target();
  const receivers: SwitchableReceiver[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  return {
    'when a review over 50 grants is decided in part and falls due with onOverdue "revoke", then the rest are revoked for the review, the trail shows every change, and the signed report and its CSV say so':
      async () => {
        const org = `review-${randomUUID().slice(0, 8)}`;
        const token = await t().tokenFor(org);
        const reviews = `${t().credentials}/v1/organizations/${org}/access-reviews`;
        const send = (url: string, method: string, body?: object, headers: Record<string, string> = {}) =>
          request(url, {
            method,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
            ...(body ? { body: JSON.stringify(body) } : {}),
          });

        const grants = [];
        for (let index = 0; index < GRANTS; index += 1) {
          grants.push(await createAuthorization(t().credentials, org, token, { recipientType: 'auditor', scopes: ['qr_score'] }));
        }
        // The organization's alert webhook hears of the review's alerts (decision 44's alerts, through the notifier).
        const receiver = await startSwitchableReceiver(t().receiverHost);
        receivers.push(receiver);
        const subscribed = await send(`${t().notifier}/v1/organizations/${org}/webhooks`, 'POST', {
          url: receiver.url,
          events: ['access_review.due_soon', 'access_review.completed'],
        });
        expect(subscribed.status).toBe(201);
        const alerts = (type: string) =>
          receiver.received
            .map((delivery) => JSON.parse(delivery.body) as { type: string; data: Record<string, unknown> })
            .filter((alert) => alert.type === type);

        // One grant reads during the review: its use is in the report.
        await postScore(t().scoreIngest, token, aScoreSubmission({ organizationId: org }));

        // Refusals: a due time in the past, or none that parses; an unknown review.
        expect((await send(reviews, 'POST', { dueAt: '2020-01-01T00:00:00Z', onOverdue: 'revoke' })).body).toMatchObject({
          code: 'VALIDATION_FAILED',
          details: [{ path: 'dueAt' }],
        });
        expect((await send(reviews, 'POST', { dueAt: 'tomorrow', onOverdue: 'keep' })).status).toBe(400);
        expect((await send(`${reviews}/arv_000000000000000000000000`, 'GET')).body.code).toBe('ACCESS_REVIEW_NOT_FOUND');

        const dueAt = new Date(Date.now() + 15_000).toISOString();
        const created = await send(reviews, 'POST', { dueAt, onOverdue: 'revoke' });
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject({
          createdBy: { type: 'person', id: '|developer', via: 'api' },
          dueAt,
          onOverdue: 'revoke',
          status: 'open',
          progress: { total: GRANTS, decided: 0, kept: 0, revoked: 0, pending: GRANTS },
        });
        const reviewId = created.body.reviewId as string;
        const review = `${reviews}/${reviewId}`;

        const reader = grants[0]!;
        await eventually(async () => {
          const read = await request(`${t().readApi}/v1/customers/${reader.clientId}/score`, { headers: { 'x-api-key': reader.apiKey } });
          return read.status === 200 ? true : undefined;
        }, 30_000);

        const kept = grants.slice(0, KEPT).map((grant) => grant.clientId);
        const revoked = grants.slice(KEPT, KEPT + REVOKED).map((grant) => grant.clientId);
        const overdue = grants.slice(KEPT + REVOKED).map((grant) => grant.clientId);
        for (const clientId of kept)
          expect((await send(`${review}/items/${clientId}`, 'PUT', { decision: 'keep', note: 'still audits us' })).status).toBe(200);
        for (const clientId of revoked) expect((await send(`${review}/items/${clientId}`, 'PUT', { decision: 'revoke' })).status).toBe(200);

        // A decision stands; a grant that is no item is not found; a bad body is refused.
        expect((await send(`${review}/items/${kept[0]}`, 'PUT', { decision: 'revoke' })).body.code).toBe('ACCESS_REVIEW_ITEM_DECIDED');
        expect((await send(`${review}/items/rs_notagrantofthisreview0`, 'PUT', { decision: 'keep' })).body.code).toBe(
          'ACCESS_REVIEW_ITEM_NOT_FOUND',
        );
        expect((await send(`${review}/items/${overdue[0]}`, 'PUT', { decision: 'maybe' })).body.code).toBe('VALIDATION_FAILED');

        const progress = (await send(review, 'GET')).body;
        expect(progress.progress).toEqual({
          total: GRANTS,
          decided: KEPT + REVOKED,
          kept: KEPT,
          revoked: REVOKED,
          pending: GRANTS - KEPT - REVOKED,
        });
        const listed = await send(`${reviews}?limit=1`, 'GET');
        expect(listed.body).toMatchObject({ items: [{ reviewId }], nextCursor: null });

        // The due time: the rest are revoked for the review, by the system.
        const completed = await eventually(
          async () => {
            const answer = await send(review, 'GET');
            return answer.body.status === 'completed' ? answer.body : undefined;
          },
          60_000,
          250,
        );
        expect(completed.progress).toEqual({ total: GRANTS, decided: GRANTS, kept: KEPT, revoked: GRANTS - KEPT, pending: 0 });
        const listOf = async () =>
          (await send(`${t().credentials}/v1/organizations/${org}/authorizations`, 'GET')).body.authorizations as {
            clientId: string;
            status: string;
            revocationReason: string | null;
          }[];
        const after = new Map((await listOf()).map((grant) => [grant.clientId, grant]));
        for (const clientId of kept) expect(after.get(clientId)).toMatchObject({ status: 'active', revocationReason: null });
        for (const clientId of [...revoked, ...overdue])
          expect(after.get(clientId)).toMatchObject({ status: 'revoked', revocationReason: 'access_review' });
        for (const item of completed.items as { clientId: string; overdue: boolean; decidedBy: { type: string } }[]) {
          expect(item.overdue).toBe(overdue.includes(item.clientId));
          expect(item.decidedBy.type).toBe(overdue.includes(item.clientId) ? 'system' : 'person');
        }
        expect((await send(`${review}/items/${overdue[1]}`, 'PUT', { decision: 'keep' })).body.code).toBe('ACCESS_REVIEW_COMPLETED');
        // A revoked grant's key no longer reads.
        const gone = grants[GRANTS - 1]!;
        await eventually(async () => {
          const read = await request(`${t().readApi}/v1/customers/${gone.clientId}/score`, { headers: { 'x-api-key': gone.apiKey } });
          return read.status === 401 ? true : undefined;
        }, 10_000);

        // Its alerts: due soon (it was created within 3 days of its due time), then completed; each once.
        await eventually(() => Promise.resolve(alerts('access_review.completed').length > 0 ? true : undefined), 30_000);
        expect(alerts('access_review.due_soon')).toEqual([
          expect.objectContaining({ data: { reviewId, dueAt, pending: expect.any(Number) } }),
        ]);
        expect(alerts('access_review.completed')).toEqual([
          expect.objectContaining({ data: { reviewId, completedAt: completed.completedAt, kept: KEPT, revoked: GRANTS - KEPT } }),
        ]);

        // The audit trail: the review's creation, each decision and its completion, and each revocation. The view
        // takes the events from several partitions (a review's and each grant's), so the completion may come
        // before the last revocations: wait for all of them.
        const trail = await eventually(async () => {
          const answer = await send(`${t().credentials}/v1/organizations/${org}/audit-log?limit=500`, 'GET');
          const items = answer.body.items as { action: string; actor: { type: string } }[];
          const revocations = items.filter((entry) => entry.action === 'authorization.revoked').length;
          const done = items.some((entry) => entry.action === 'access_review.completed') && revocations >= REVOKED + overdue.length;
          return done ? items : undefined;
        }, 30_000);
        const count = (action: string, type?: string) =>
          trail.filter((entry) => entry.action === action && (!type || entry.actor.type === type)).length;
        expect(count('access_review.created', 'person')).toBe(1);
        expect(count('access_review.item_decided', 'person')).toBe(KEPT + REVOKED);
        expect(count('access_review.item_decided', 'system')).toBe(overdue.length);
        expect(count('access_review.completed', 'system')).toBe(1);
        expect(count('authorization.revoked', 'person')).toBe(REVOKED);
        expect(count('authorization.revoked', 'system')).toBe(overdue.length);

        let readerLine: object | undefined;
        // The report: signed, and verified by `rsd verify` online and offline; one changed byte fails.
        const signed = await eventually(async () => {
          const answer = await send(`${review}/report`, 'GET');
          const line = (answer.body.report.items as { clientId: string; readsInPeriod: number; lastUsedAt: string | null }[]).find(
            (item) => item.clientId === reader.clientId,
          );
          return line && line.readsInPeriod > 0
            ? { signed: answer.body as { report: { items: unknown[] }; jws: string }, line }
            : undefined;
        }, 30_000).then((found) => {
          readerLine = found.line;
          return found.signed;
        });
        expect(signed.report).toMatchObject({ reviewId, status: 'completed', progress: completed.progress });
        expect(readerLine).toMatchObject({ lastUsedAt: expect.any(String) });
        const dir = await mkdtemp(join(tmpdir(), 'rsd-review-'));
        try {
          const reportFile = join(dir, 'report.json');
          await writeFile(reportFile, JSON.stringify(signed));
          const online = await runRsd(['verify', reportFile], { RSD_API_URL: t().readApi });
          expect(online).toMatchObject({ code: 0 });
          expect(JSON.parse(online.stdout)).toEqual(signed.report);
          expect(online.stderr).toContain('access review report verified');

          const keys = await runRsd(['certificate', 'keys'], { RSD_API_URL: t().readApi });
          const keysFile = join(dir, 'keys.json');
          await writeFile(keysFile, keys.stdout);
          expect(await runRsd(['verify', reportFile, '--keys', keysFile], {})).toMatchObject({ code: 0 });

          const [header, payload, signature] = signed.jws.split('.') as [string, string, string];
          const bytes = Buffer.from(payload, 'base64url');
          bytes[10] = bytes[10]! ^ 0x01;
          const tampered = join(dir, 'tampered.jws');
          await writeFile(tampered, `${header}.${bytes.toString('base64url')}.${signature}`);
          const refused = await runRsd(['verify', tampered, '--keys', keysFile], {});
          expect(refused.code).toBe(1);
          expect(refused.stderr).toContain('NOT valid');
        } finally {
          await rm(dir, { recursive: true, force: true });
        }

        // The CSV: a header and a line per grant, read back by an independent parser.
        const csv = await fetch(`${review}/report`, { headers: { authorization: `Bearer ${token}`, accept: 'text/csv' } });
        expect(csv.headers.get('content-type')).toContain('text/csv');
        const [head, ...rows] = parseCsvIndependently(await csv.text());
        expect(head).toEqual([
          'clientId',
          'recipientType',
          'recipientName',
          'scopes',
          'lastUsedAt',
          'readsInPeriod',
          'decision',
          'overdue',
          'note',
          'decidedAt',
          'decidedByType',
          'decidedById',
          'decidedByVia',
        ]);
        expect(rows).toHaveLength(GRANTS);
        const byClient = new Map(rows.map((row) => [row[0], row]));
        expect(byClient.get(kept[0])!.slice(6, 9)).toEqual(['keep', 'false', 'still audits us']);
        expect(byClient.get(overdue[0])!.slice(6, 8)).toEqual(['revoke', 'true']);
        expect(byClient.get(kept[1])!.slice(10, 13)).toEqual(['person', '|developer', 'api']);
      },
  };
}
