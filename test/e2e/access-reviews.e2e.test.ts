import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCsvIndependently } from '@rsd/testkit';
import { accessReviewScenarios } from '../support/access-review-scenarios';
import { embeddedSuite } from '../support/embedded-suite';
import { createAuthorization } from '../support/organization-admin';
import { runRsd } from '../support/rsd-cli';

const suite = embeddedSuite('rsd-reviews-', {
  ACCESS_REVIEW_CHECK_INTERVAL_MS: '500',
  // The test's webhook receiver listens on this machine.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
});
const scenarios = accessReviewScenarios(() => ({ ...suite.product.urls, receiverHost: '127.0.0.1', tokenFor: suite.tokenFor }));

describe('access reviews (decision 54) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 180_000);
});

describe('rsd access-reviews (decision 54) against the embedded runtime', () => {
  test('when a review is created, listed, decided and reported with rsd, then each prints what the API answers, the JSON report passes rsd verify, refusals name their code and request id, and wrong usage exits 2', async () => {
    const org = `cli-review-${randomUUID().slice(0, 8)}`;
    const token = await suite.tokenFor(org);
    const grants = [];
    for (const recipientType of ['auditor', 'partner', 'regulatory_body']) {
      grants.push(await createAuthorization(suite.product.urls.credentials, org, token, { recipientType, scopes: ['qr_score'] }));
    }
    const [kept, revoked] = grants.map((grant) => grant.clientId) as [string, string];
    // The CLI mints its own token from the runtime's development secret, as on a developer's machine.
    const env = { RSD_CREDENTIALS_URL: suite.product.urls.credentials, RSD_API_URL: suite.product.urls.readApi, DATA_DIR: suite.dataDir };
    const rsd = (...args: string[]) => runRsd(['access-reviews', ...args, '--org', org], env);
    const json = (outcome: { code: number; stdout: string; stderr: string }) => {
      expect(outcome).toMatchObject({ code: 0, stderr: '' });
      return JSON.parse(outcome.stdout) as Record<string, unknown>;
    };

    const dueAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = json(await rsd('create', '--due-at', dueAt, '--on-overdue', 'keep'));
    expect(created).toMatchObject({
      dueAt,
      onOverdue: 'keep',
      status: 'open',
      createdBy: { type: 'person', via: 'cli' },
      progress: { total: 3, pending: 3 },
    });
    const reviewId = created.reviewId as string;
    expect(json(await rsd('list', '--limit', '1'))).toEqual({ items: [created] });

    json(await rsd('decide', '--review-id', reviewId, '--client-id', kept, '--decision', 'keep', '--note', 'still audits us'));
    const decided = json(await rsd('decide', '--review-id', reviewId, '--client-id', revoked, '--decision', 'revoke'));
    expect(decided.progress).toEqual({ total: 3, decided: 2, kept: 1, revoked: 1, pending: 1 });
    expect(json(await rsd('get', '--review-id', reviewId))).toEqual(decided);

    // Refusals: the service's status, code and message, and the request id to quote; exit 1.
    const again = await rsd('decide', '--review-id', reviewId, '--client-id', kept, '--decision', 'revoke');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^rsd: 409 ACCESS_REVIEW_ITEM_DECIDED: .+ \(request id [A-Za-z0-9._-]+\)\n$/);
    const unknown = await rsd('get', '--review-id', 'arv_000000000000000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^rsd: 404 ACCESS_REVIEW_NOT_FOUND: .+ \(request id [A-Za-z0-9._-]+\)\n$/);

    // The JSON report, saved as printed, is what rsd verify checks; the CSV is read back by an independent parser.
    const report = await rsd('report', '--review-id', reviewId);
    const signed = json(report) as { report: { reviewId: string }; jws: string };
    expect(signed.report).toMatchObject({ reviewId, progress: decided.progress });
    const dir = await mkdtemp(join(tmpdir(), 'rsd-cli-review-'));
    try {
      const file = join(dir, 'report.json');
      await writeFile(file, report.stdout);
      const verified = await runRsd(['verify', file], env);
      expect(verified.code).toBe(0);
      expect(verified.stderr).toContain('access review report verified');
      expect(JSON.parse(verified.stdout)).toEqual(signed.report);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const csv = await rsd('report', '--review-id', reviewId, '--output', 'csv');
    expect(csv.code).toBe(0);
    const [head, ...rows] = parseCsvIndependently(csv.stdout);
    expect(head?.slice(0, 3)).toEqual(['clientId', 'recipientType', 'recipientName']);
    expect(rows).toHaveLength(3);
    expect(rows.find((row) => row[0] === kept)?.slice(6, 9)).toEqual(['keep', 'false', 'still audits us']);

    // Wrong usage exits 2 and sends nothing: the review is as it was.
    for (const args of [
      ['create', '--on-overdue', 'keep'],
      ['create', '--due-at', 'tomorrow', '--on-overdue', 'keep'],
      ['create', '--due-at', dueAt, '--on-overdue', 'maybe'],
      ['decide', '--review-id', reviewId, '--client-id', revoked, '--decision', 'maybe'],
      ['list', '--limit', '0'],
      ['report', '--review-id', reviewId, '--output', 'pdf'],
      ['get'],
    ]) {
      const wrong = await rsd(...args);
      expect({ args, code: wrong.code, stdout: wrong.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(wrong.stderr).toMatch(/^rsd: /);
    }
    expect(json(await rsd('list'))).toEqual({ items: [{ ...created, progress: decided.progress }] });
  }, 120_000);
});
