import { randomUUID } from 'node:crypto';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventually } from './embedded-process';
import * as orgAdmin from './organization-admin';
import { accountClaimedFrom } from './portfolio-scenarios';
import { readPdf, verifiedByJoserfc, withOneByteChanged } from './certificate-checks';

/*
 * Decision 55's certificates as a recipient and a verifier meet them, over HTTP, on any runtime: the
 * embedded one (one read API) and the distributed one (two read-API replicas, each of which must
 * answer the same). Each scenario makes an organization of its own with two scores: 2026-11-10
 * (score 61) and 2026-11-20 (score 83).
 */

export interface CertificateTarget {
  credentials: string;
  scoreIngest: string;
  /** Every read-API replica: a read is checked on each. */
  readApis: string[];
  tokenFor(org: string): Promise<string>;
}

const EARLIER = { scoreDate: '2026-11-10', score: 61, grade: 'Strengthen' as const };
const LATER = { scoreDate: '2026-11-20', score: 83, grade: 'Sustain' as const };
const RECIPIENT_NAME = 'Harbour Mutual Insurance';

interface SignedCertificate {
  certificate: Record<string, unknown> & { score: number; scoreDate: string; asOf: string; pillarScores?: object };
  jws: string;
}

export function certificateScenarios(target: () => CertificateTarget) {
  const t = () => target();

  /** An organization with the two scores, and a grant of it with `scopes`, readable on every replica. */
  async function aGrant(scopes: string[]) {
    const org = `cert-${randomUUID().slice(0, 8)}`;
    const token = await t().tokenFor(org);
    for (const { scoreDate, score, grade } of [EARLIER, LATER]) {
      await orgAdmin.postScore(t().scoreIngest, token, aScoreSubmission({ organizationId: org, scoreDate, score, grade }));
    }
    const credential = await orgAdmin.createAuthorization(t().credentials, org, token, {
      recipientType: 'insurance_provider',
      recipientName: RECIPIENT_NAME,
      scopes,
    });
    const certificate = (readApi: string, query = '', headers: Record<string, string> = {}) =>
      fetch(`${readApi}/v1/customers/${credential.clientId}/certificate${query}`, {
        headers: { 'x-api-key': credential.apiKey, ...headers },
      });
    // Both scores projected on every replica before a scenario reads.
    for (const readApi of t().readApis) {
      await eventually(async () => {
        const answer = await certificate(readApi, `?asOf=${LATER.scoreDate}`);
        return answer.status === 200 && ((await answer.json()) as SignedCertificate).certificate.score === LATER.score ? true : undefined;
      }, 30_000);
    }
    return { org, token, credential, certificate };
  }

  const keySetOf = async (readApi: string) => (await request(`${readApi}/.well-known/jwks.json`)).body as { keys: { kid: string }[] };

  return {
    'when certificates are asked for around two scores, then each holds the score that was the latest on asOf; before any is 404, a future or malformed date 400':
      async () => {
        const { org, credential, certificate } = await aGrant(['qr_score']);
        const today = new Date().toISOString().slice(0, 10);
        const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
        for (const readApi of t().readApis) {
          const on = async (asOf: string | undefined) => {
            const answer = await certificate(readApi, asOf === undefined ? '' : `?asOf=${asOf}`);
            return { status: answer.status, body: (await answer.json()) as SignedCertificate & { code?: string } };
          };
          const between = await on('2026-11-15');
          expect(between.status).toBe(200);
          expect(between.body.certificate).toMatchObject({
            organization: { organizationId: org },
            recipient: { clientId: credential.clientId, type: 'insurance_provider', name: RECIPIENT_NAME },
            score: EARLIER.score,
            grade: EARLIER.grade,
            scoreDate: EARLIER.scoreDate,
            // When the score ingest received it.
            calculatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
            asOf: '2026-11-15',
            certificateId: expect.stringMatching(/^crt_[A-Za-z0-9_-]{22}$/),
          });
          // The score's calculation and the grant's creation.
          expect(between.body.certificate.eventIds).toHaveLength(2);
          expect((await on(LATER.scoreDate)).body.certificate).toMatchObject({ score: LATER.score, scoreDate: LATER.scoreDate });
          expect((await on(EARLIER.scoreDate)).body.certificate).toMatchObject({ score: EARLIER.score, scoreDate: EARLIER.scoreDate });
          expect((await on(undefined)).body.certificate).toMatchObject({ score: LATER.score, asOf: today });
          expect(await on('2026-11-09')).toMatchObject({ status: 404, body: { code: 'SCORE_NOT_FOUND' } });
          for (const refused of [tomorrow, '2026-13-01', '2026-11-1', 'yesterday']) {
            expect(await on(refused)).toMatchObject({ status: 400, body: { code: 'INVALID_PARAMETER' } });
          }
        }
      },

    'when the grant holds pillar_breakdown, then its certificate has the pillars, and without it none': async () => {
      const withPillars = await aGrant(['qr_score', 'pillar_breakdown']);
      const without = await aGrant(['qr_score']);
      const noScoreScope = await aGrant(['qr_score']).then(async ({ org, token }) =>
        orgAdmin.createAuthorization(t().credentials, org, token, { recipientType: 'insurance_provider', scopes: ['pillar_breakdown'] }),
      );
      for (const readApi of t().readApis) {
        const pillared = (await (await withPillars.certificate(readApi)).json()) as SignedCertificate;
        expect(pillared.certificate.pillarScores).toEqual(aScoreSubmission().pillarScores);
        const plain = (await (await without.certificate(readApi)).json()) as SignedCertificate;
        expect(plain.certificate).not.toHaveProperty('pillarScores');
        const refused = await fetch(`${readApi}/v1/customers/${noScoreScope.clientId}/certificate`, {
          headers: { 'x-api-key': noScoreScope.apiKey },
        });
        expect(refused.status).toBe(403);
      }
    },

    'when an independent JOSE implementation checks the JWS against the published keys, then it verifies and says the certificate; one changed byte fails':
      async () => {
        const { certificate } = await aGrant(['qr_score', 'pillar_breakdown']);
        for (const readApi of t().readApis) {
          const { certificate: said, jws } = (await (await certificate(readApi, '?asOf=2026-11-15')).json()) as SignedCertificate;
          const keySet = await keySetOf(readApi);

          const verified = await verifiedByJoserfc(jws, keySet);

          expect(verified).toMatchObject({ valid: true, header: { alg: 'EdDSA', typ: 'rsd-certificate+json' }, payload: said });
          expect(keySet.keys.map((key) => key.kid)).toContain(verified.valid && verified.header.kid);
          expect(await verifiedByJoserfc(withOneByteChanged(jws), keySet)).toMatchObject({ valid: false });
        }
      },

    'when the certificate is asked for as a PDF, then poppler reads its score, grade, date, organization and recipient, and the JWS in its metadata verifies':
      async () => {
        const { org, credential, certificate } = await aGrant(['qr_score']);
        for (const readApi of t().readApis) {
          const answer = await certificate(readApi, '?asOf=2026-11-15', { accept: 'application/pdf' });
          expect(answer.status).toBe(200);
          expect(answer.headers.get('content-type')).toBe('application/pdf');
          expect(answer.headers.get('signature')).toMatch(/^sig1=:/);

          const pdf = await readPdf(Buffer.from(await answer.arrayBuffer()));

          expect(pdf.pages).toBe(1);
          for (const text of [
            `Score: ${EARLIER.score}`,
            `Grade: ${EARLIER.grade}`,
            `Score date: ${EARLIER.scoreDate}`,
            'As of: 2026-11-15',
          ]) {
            expect(pdf.text).toContain(text);
          }
          expect(pdf.text).toContain(org);
          expect(pdf.text).toContain(`${RECIPIENT_NAME} (insurance_provider)`);
          expect(pdf.text).toContain(credential.clientId);
          const verified = await verifiedByJoserfc(pdf.keywords, await keySetOf(readApi));
          expect(verified).toMatchObject({ valid: true, payload: { score: EARLIER.score, asOf: '2026-11-15' } });
        }
      },

    "when a certificate is fetched, then it is a read in the grant's access log with the date and format asked for, which the resource filter lists alone":
      async () => {
        const { org, token, credential, certificate } = await aGrant(['qr_score']);
        const [readApi] = t().readApis as [string];
        const fetched = await certificate(readApi, '?asOf=2026-11-15');
        const printed = await certificate(readApi, '?asOf=2026-11-16', { accept: 'application/pdf' });
        const refused = await certificate(readApi, '?asOf=someday');
        expect([fetched.status, printed.status, refused.status]).toEqual([200, 200, 400]);
        const [json, pdf, malformed] = [fetched, printed, refused].map((answer) => answer.headers.get('x-request-id'));
        const accessLog = `${t().credentials}/v1/organizations/${org}/authorizations/${credential.clientId}/access-log`;
        type Entry = { requestId: string; resource: string; status: number; certificate?: object };
        const entries = (query: string) =>
          request<{ items: Entry[] }>(`${accessLog}${query}`, { headers: { authorization: `Bearer ${token}` } }).then(
            (log) => log.body.items ?? [],
          );

        const listed = await eventually(async () => {
          const items = await entries('?limit=500');
          return [json, pdf, malformed].every((id) => items.some((item) => item.requestId === id)) ? items : undefined;
        }, 30_000);
        const byRequest = (id: string | null | undefined) => listed.find((item) => item.requestId === id);

        expect(byRequest(json)).toMatchObject({
          resource: 'certificate',
          status: 200,
          certificate: { asOf: '2026-11-15', format: 'json' },
        });
        expect(byRequest(pdf)).toMatchObject({ resource: 'certificate', status: 200, certificate: { asOf: '2026-11-16', format: 'pdf' } });
        // A date that is none was refused before the certificate was known: a read, with nothing to describe.
        expect(byRequest(malformed)).toMatchObject({ resource: 'certificate', status: 400 });
        expect(byRequest(malformed)).not.toHaveProperty('certificate');
        const certificates = await entries('?resource=certificate&status=2xx');
        // Every certificate served (the grant's own wait for its score fetched some too), newest first, and nothing else.
        const served = listed.filter((item) => item.resource === 'certificate' && item.status === 200);
        expect(certificates).toEqual(served);
        expect(certificates.slice(0, 2).map((item) => item.requestId)).toEqual([pdf, json]);
        expect(listed.filter((item) => item.resource !== 'certificate').every((item) => !('certificate' in item))).toBe(true);
      },

    'when an account pages its certificates, then each grant holding qr_score has its certificate on asOf, and the next page keeps asOf':
      async () => {
        const first = await aGrant(['qr_score']);
        const account = await accountClaimedFrom(t().credentials, first.org, first.token);
        const second = await aGrant(['qr_score', 'pillar_breakdown']);
        const granted = await request<{ clientId: string }>(`${t().credentials}/v1/organizations/${second.org}/authorizations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${second.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            recipientType: 'auditor',
            scopes: ['qr_score'],
            keyDelivery: 'account',
            recipientAccountId: account.accountId,
          }),
        });
        expect(granted.status).toBe(201);
        const accepted = await request(`${t().credentials}/v1/portfolio/offers/${granted.body.clientId}/accept`, {
          method: 'POST',
          headers: { 'x-api-key': account.accountKey },
        });
        expect(accepted.status).toBe(200);
        const page = (readApi: string, query: string) =>
          request<{ items: (SignedCertificate & { clientId: string })[]; nextCursor: string | null }>(
            `${readApi}/v1/portfolio/certificates${query}`,
            { headers: { 'x-api-key': account.accountKey } },
          );

        for (const readApi of t().readApis) {
          const all = await eventually(async () => {
            const answer = await page(readApi, '?asOf=2026-11-15');
            return answer.status === 200 && answer.body.items.length === 2 ? answer : undefined;
          }, 30_000);
          expect(new Set(all.body.items.map((item) => item.clientId))).toEqual(new Set([account.clientId, granted.body.clientId]));
          for (const item of all.body.items) {
            expect(item.certificate).toMatchObject({ score: EARLIER.score, asOf: '2026-11-15', recipient: { clientId: item.clientId } });
            expect(await verifiedByJoserfc(item.jws, await keySetOf(readApi))).toMatchObject({ valid: true, payload: item.certificate });
          }

          const firstPage = await page(readApi, '?asOf=2026-11-15&limit=1');
          expect(firstPage.body.items).toHaveLength(1);
          const next = firstPage.headers.get('link');
          expect(next).toMatch(/asOf=2026-11-15/);
          const nextUrl = new URL(/<([^>]+)>/.exec(next ?? '')?.[1] ?? '', `${readApi}/v1/portfolio/certificates`);
          const secondPage = await page(readApi, nextUrl.search);
          expect(secondPage.body.items.map((item) => item.certificate.asOf)).toEqual(['2026-11-15']);
          expect(await page(readApi, '?asOf=2099-01-01')).toMatchObject({ status: 400, body: { code: 'INVALID_PARAMETER' } });
        }
      },
  };
}
