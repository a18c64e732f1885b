import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readDevSecret, signDevToken } from '@rsd/platform';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventually, REPO_ROOT, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import { everySqliteRow } from '../support/leak-search';

/**
 * Tables that keep the offboarding's own ids by design, apart from the stores searched: the event log
 * (the log keeps its records; decision 56's sealing makes what they hold unreadable) and the
 * offboardings' record (ids and instants, 30 days). The subject keys' tombstones are in a file of their own.
 */
const NOT_STORES = ['events', 'offboardings'];
const everyStoredRow = (dataDir: string, namespace?: string) => everySqliteRow(dataDir, { except: NOT_STORES, namespace });

const runFile = promisify(execFile);

const OFFBOARDED = 'offboarded-e2e';
const KEPT = 'kept-e2e';
/** What each organization writes that is its own: a recipient's name, and a score no other has. */
const NAMES = { [OFFBOARDED]: 'Offboarded Recipient Zelda', [KEPT]: 'Kept Recipient Bertha' };
const SCORES = { [OFFBOARDED]: 61, [KEPT]: 88 };

let dataDir: string;
let product: EmbeddedProcess;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-offboarding-'));
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

test('when one of two organizations is offboarded, then no store, view or log line holds its names, scores or grants, a rebuild of the views makes none of it again, and the other still reads', async () => {
  const secret = (await readDevSecret(dataDir))!;
  const grants: Record<string, { clientId: string; apiKey: string }> = {};
  for (const org of [OFFBOARDED, KEPT] as const) {
    const admin = { authorization: `Bearer ${await devTokenFor(dataDir, org)}`, 'content-type': 'application/json' };
    const created = await request(`${product.urls.credentials}/v1/organizations/${org}/authorizations`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        recipientType: 'auditor',
        recipientName: NAMES[org],
        scopes: ['qr_score', 'pillar_breakdown', 'score_trend'],
      }),
    });
    expect(created.status).toBe(201);
    grants[org] = created.body as { clientId: string; apiKey: string };
    const submitted = await request(`${product.urls.scoreIngest}/v1/scores`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify(aScoreSubmission({ organizationId: org, score: SCORES[org] })),
    });
    expect(submitted.status).toBe(202);
    // A read of each, so each has access-log rows and usage.
    await eventually(async () => {
      const read = await request(`${product.urls.readApi}/v1/customers/${grants[org]!.clientId}/score`, {
        headers: { 'x-api-key': grants[org]!.apiKey },
      });
      return read.status === 200 ? read : undefined;
    });
  }
  const offboarder = { authorization: `Bearer ${await signDevToken(secret, { org: OFFBOARDED, scope: 'organizations:delete' })}` };
  const offboarded = grants[OFFBOARDED]!;
  // What must not be readable anywhere afterwards: the name, the grant, and the score as the views keep it.
  const traces = [NAMES[OFFBOARDED], offboarded.clientId, `"organizationId":"${OFFBOARDED}"`];
  expect((await everyStoredRow(dataDir)).some((row) => traces.some((trace) => row.includes(trace)))).toBe(true);

  const started = await request(`${product.urls.credentials}/v1/organizations/${OFFBOARDED}?confirm=${OFFBOARDED}`, {
    method: 'DELETE',
    headers: offboarder,
  });
  expect(started.status).toBe(202);
  const done = await eventually(async () => {
    const answer = await request(`${product.urls.credentials}/v1/organizations/${OFFBOARDED}/offboarding`, { headers: offboarder });
    return answer.body.status === 'done' ? answer.body : undefined;
  }, 20_000);
  expect(done).toMatchObject({ startedAt: started.body.startedAt, doneAt: expect.any(String) as string });

  const leaks = (rows: string[]) => rows.filter((row) => traces.some((trace) => row.includes(trace)));
  expect(leaks(await everyStoredRow(dataDir))).toEqual([]);
  expect(product.output()).not.toContain(NAMES[OFFBOARDED]);
  // The other organization is untouched: its recipient still reads its score.
  const kept = await request(`${product.urls.readApi}/v1/customers/${grants[KEPT]!.clientId}/score`, {
    headers: { 'x-api-key': grants[KEPT]!.apiKey },
  });
  expect(kept).toMatchObject({ status: 200, body: { score: SCORES[KEPT] } });
  expect((await everyStoredRow(dataDir)).some((row) => row.includes(NAMES[KEPT]))).toBe(true);

  // The views rebuilt from the whole log, into a namespace of their own beside the running product.
  await runFile(
    process.execPath,
    [join(REPO_ROOT, 'services/read-api/dist/rebuild-views/main.js'), '--into', 'rebuilt_after_offboarding'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, RUNTIME: 'embedded', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    },
  );
  const rebuilt = await everyStoredRow(dataDir, 'rebuilt_after_offboarding');
  expect(rebuilt.some((row) => row.includes(grants[KEPT]!.clientId))).toBe(true);
  expect(leaks(rebuilt)).toEqual([]);
}, 180_000);
