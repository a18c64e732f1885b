import type { AccessRecord } from '@rsd/contracts';
import { createMemoryViewStore } from '@rsd/embedded';
import { createServiceMetrics } from '@rsd/observability';
import { createLogger } from '@rsd/platform';
import type { ViewStore } from '@rsd/ports';
import { eventually, request, type RunningApp } from '@rsd/testkit';
import { issueCredential, recordScore, revokeCredential, testClock, type IssuedCredential } from '../testing/read-api-fixtures';
import { startReadApi } from '../testing/read-api-harness';
import { createAccessRecorder } from './access-recorder';
import type { RecordAccess } from './record-on-finish';

const log = createLogger('read-api', 'silent');
const clock = testClock('2026-11-21T08:00:00.000Z');

async function aReadApi(views: ViewStore, recordAccess: RecordAccess, env: Record<string, string> = {}) {
  const metrics = createServiceMetrics('read-api');
  const running = await startReadApi({
    // One trusted proxy hop, so each request can say which client address it came from.
    env: { TRUST_PROXY_HOPS: '1', RATE_LIMIT_PER_MINUTE: '4', FAILED_AUTH_LIMIT_PER_MINUTE: '2', ...env },
    views,
    clock,
    log,
    operations: { metrics, readiness: [] },
    recordAccess,
  });
  return { running, metrics };
}

describe('read API: the access record of each request (decision 21)', () => {
  let running: RunningApp;
  let views: ViewStore;
  let records: AccessRecord[];

  beforeEach(async () => {
    views = createMemoryViewStore();
    records = [];
    ({ running } = await aReadApi(views, (record) => records.push(record)));
  });

  afterEach(() => running.close());

  type Answer = Awaited<ReturnType<typeof request>>;

  const read = (credential: Pick<IssuedCredential, 'clientId' | 'apiKey'>, resource = 'score', headers: Record<string, string> = {}) =>
    request(`${running.baseUrl}/v1/customers/${credential.clientId}/${resource}`, {
      headers: { 'x-api-key': credential.apiKey, 'x-forwarded-for': '198.51.100.7', ...headers },
    });

  /** The records of a credential once `count` of them are in: a record is taken when its answer is finished. */
  const recordsOf = (clientId: string, count: number) =>
    eventually(() => {
      const found = records.filter((record) => record.clientId === clientId);
      if (found.length < count) throw new Error(`${found.length} of ${count} records so far`);
      return found;
    });

  test('when every kind of answer is given to a credential that was found, then each is recorded with its status and code, in order', async () => {
    const reader = await issueCredential(views, {
      organizationId: 'acme',
      scopes: ['qr_score', 'score_trend'],
      allowedCidrs: ['198.51.100.0/24'],
    });
    await recordScore(views, { organizationId: 'acme' });
    const wrongKey = { ...reader, apiKey: (await issueCredential(views)).apiKey };

    // Each request in turn (given the answer before it), with the resource, status and code its record must hold.
    const requests: [send: (previous: Answer | undefined) => Promise<Answer>, recorded: [string, number, string | null]][] = [
      [() => read(reader), ['score', 200, null]],
      [(previous) => read(reader, 'score', { 'if-none-match': previous!.headers.get('etag')! }), ['score', 304, null]],
      [() => read(reader, 'score/history?limit=0'), ['history', 400, 'INVALID_PARAMETER']],
      [() => read(reader, 'pillars'), ['pillars', 403, 'INSUFFICIENT_SCOPE']],
      [() => read(reader), ['score', 429, 'RATE_LIMITED']],
      [() => read(reader, 'score', { 'x-forwarded-for': '192.0.2.1' }), ['score', 403, 'ADDRESS_NOT_ALLOWED']],
      [() => read(wrongKey, 'score/history'), ['history', 401, 'INVALID_API_KEY']],
    ];
    const answers: Answer[] = [];
    for (const [send] of requests) answers.push(await send(answers.at(-1)));

    const recorded = await recordsOf(reader.clientId, answers.length);
    expect(recorded.map(({ resource, status, code }) => [resource, status, code])).toEqual(requests.map(([, expected]) => expected));
    expect(recorded.map((record) => record.requestId)).toEqual(answers.map((answer) => answer.headers.get('x-request-id')));
    expect(recorded.map((record) => record.clientAddress)).toEqual([...Array(5).fill('198.51.100.7'), '192.0.2.1', '198.51.100.7']);
    expect(new Set(recorded.map((record) => record.id)).size).toBe(answers.length);
    expect(recorded.every((record) => record.at === '2026-11-21T08:00:00.000Z')).toBe(true);
  });

  test('when the credential is inactive, the organization has no score yet, or the address keeps failing, then those refusals are recorded too', async () => {
    const revoked = await issueCredential(views);
    await revokeCredential(views, revoked);
    const noScoreYet = await issueCredential(views, { organizationId: 'newcomer' });
    const guessed = { ...noScoreYet, apiKey: revoked.apiKey };

    await read(revoked);
    await read(noScoreYet);
    await read(noScoreYet, 'pillars');
    // The failed-authentication limit of the address (2): its third failure is a 429.
    await read(guessed);
    await read(guessed);

    expect((await recordsOf(revoked.clientId, 1)).map(({ status, code }) => [status, code])).toEqual([[401, 'CREDENTIAL_INACTIVE']]);
    expect((await recordsOf(noScoreYet.clientId, 4)).map(({ status, code }) => [status, code])).toEqual([
      [404, 'SCORE_NOT_FOUND'],
      [404, 'PILLARS_NOT_FOUND'],
      [401, 'INVALID_API_KEY'],
      [429, 'RATE_LIMITED'],
    ]);
  });

  test('when no credential was found or the request never got that far, then nothing is recorded', async () => {
    const credential = await issueCredential(views);
    const unknown = { clientId: 'rs_UNKNOWNUNKNOWNUNKNOWN00', apiKey: credential.apiKey };

    await read(unknown);
    await read({ ...credential, apiKey: '' });
    await request(`${running.baseUrl}/v1/customers/not-a-client-id/score`, { headers: { 'x-api-key': credential.apiKey } });
    await read(credential);

    const recorded = await recordsOf(credential.clientId, 1);
    expect(records).toEqual(recorded);
    expect(recorded).toHaveLength(1);
  });

  test('when a request carries a key, headers and a query string, then its record holds none of them', async () => {
    const credential = await issueCredential(views, { scopes: ['score_trend'] });

    await read(credential, 'score/history?limit=5&secret=hunter2', { 'user-agent': 'agent-007', authorization: 'Bearer abc' });

    const [recorded] = await recordsOf(credential.clientId, 1);
    expect(Object.keys(recorded!).sort()).toEqual(['at', 'clientAddress', 'clientId', 'code', 'id', 'requestId', 'resource', 'status']);
    const text = JSON.stringify(recorded);
    for (const secret of [credential.apiKey, 'hunter2', 'limit', 'agent-007', 'Bearer']) expect(text).not.toContain(secret);
  });
});

describe('read API: an access-log stream that is down (decision 21)', () => {
  test('when the stream hangs, then reads are answered without waiting for it, and what the full buffer cannot hold is dropped and counted in the metrics', async () => {
    const views = createMemoryViewStore();
    const credential = await issueCredential(views);
    await recordScore(views, { organizationId: credential.organizationId });
    let attempts = 0;
    const recorder = createAccessRecorder({
      publish: () => {
        attempts += 1;
        return new Promise(() => undefined);
      },
      maxBuffered: 20,
      batchSize: 5,
      flushIntervalMs: 50,
      log,
      metrics: {
        published: () => undefined,
        publishFailed: () => undefined,
        dropped: (reason, n) => metrics.accessLogDropped.inc({ reason }, n),
        buffered: () => undefined,
      },
    });
    const { running, metrics } = await aReadApi(views, recorder.record, { RATE_LIMIT_PER_MINUTE: '1000' });
    try {
      const statuses = [];
      for (let n = 0; n < 100; n += 1) {
        statuses.push(
          (await request(`${running.baseUrl}/v1/customers/${credential.clientId}/score`, { headers: { 'x-api-key': credential.apiKey } }))
            .status,
        );
      }
      await eventually(() => expect(recorder.dropped).toBe(80));
      const exposed = await request(`${running.baseUrl}/metrics`);

      // All answered while the stream's only publish still hangs (it never settles): no read waited for it.
      // How fast reads are is the benchmarks' to measure, not a unit test's.
      expect(statuses.every((status) => status === 200)).toBe(true);
      expect(recorder.buffered).toBe(20);
      expect(recorder.dropped).toBe(80);
      expect(attempts).toBe(1);
      expect(exposed.body).toMatch(/access_log_dropped_total\{reason="buffer_full",service="read-api"\} 80/);
    } finally {
      await running.close();
      await recorder.stop(0);
    }
  });
});
