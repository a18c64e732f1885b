import { MAX_SCORES_PER_BATCH } from '@rsd/contracts';
import { signDevToken } from '@rsd/platform';

// Decision 52's benchmark row: a score's time from ingest to readable on every read-API replica at a
// given rate of scores a second, on the distributed runtime. A scoring engine (a token without an
// `org` claim) posts a batch every TICK_MS, the rate's scores spread over ORGANIZATIONS organizations,
// each organization's scores a day apart so that every one is its organization's new latest. One
// score of each batch is sampled: from its batch's 202 (every score durably in the event log) until
// each replica serves that organization's latest at its date or later (a replica applies an
// organization's scores in order), polled every POLL_MS. A sample's time is the slowest replica's.

const TICK_MS = 100;
const POLL_MS = 10;
const ORGANIZATIONS = 50;
const FIRST_DAY = Date.parse('2000-01-01T00:00:00Z');

export interface IngestTarget {
  credentials: string;
  scoreIngest: string;
  readApis: string[];
  /** The development secret the services verify tokens with. */
  secret: string;
  /** Names this run's organizations apart from any other's. */
  run: string;
}

export interface IngestRateFigures {
  rate: number;
  /** Scores acknowledged a second, over the measured period: below `rate` when the machine could not keep up. */
  achieved: number;
  /** Per sample, ms from its batch's 202 until every replica served it. */
  everyReplica: number[];
  /** Per replica, the same for that replica alone. */
  perReplica: number[][];
  /** Samples some replica had not served 10 s after their 202 (not in the figures above). */
  unseen: number;
  batchMs: number[];
}

export interface Grant {
  organizationId: string;
  clientId: string;
  apiKey: string;
  day: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const dateOf = (day: number) => new Date(FIRST_DAY + day * 86_400_000).toISOString().slice(0, 10);

async function post(url: string, token: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await answer.text();
  return { status: answer.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function latestDate(readApi: string, grant: Grant): Promise<string | undefined> {
  const answer = await fetch(`${readApi}/v1/customers/${grant.clientId}/score`, { headers: { 'x-api-key': grant.apiKey } });
  const body = (await answer.json().catch(() => ({}))) as { scoreDate?: string };
  return answer.status === 200 ? body.scoreDate : undefined;
}

function scoreOf(grant: Grant) {
  const score = 20 + (grant.day % 70);
  return {
    organizationId: grant.organizationId,
    scoreDate: dateOf(grant.day),
    score,
    grade: score >= 50 ? 'Strengthen' : 'Improve',
    pillarScores: { structuralIntegrity: score, failureResistance: score, deviceHealth: score, recoveryCapability: score },
  };
}

/** The organizations, a grant each and a first score each, every replica serving them. */
export async function ingestGrants(target: IngestTarget): Promise<Grant[]> {
  const grants: Grant[] = [];
  for (let n = 0; n < ORGANIZATIONS; n += 1) {
    const organizationId = `ingest-${target.run}-${n}`;
    const token = await signDevToken(target.secret, { org: organizationId, scope: 'authorizations:write' });
    const created = await post(`${target.credentials}/v1/organizations/${organizationId}/authorizations`, token, {
      recipientType: 'insurance_provider',
      scopes: ['qr_score'],
    });
    if (created.status !== 201) throw new Error(`ingest-rate: create answered ${created.status}`);
    grants.push({ organizationId, clientId: String(created.body.clientId), apiKey: String(created.body.apiKey), day: 0 });
  }
  const engine = await signDevToken(target.secret, { scope: 'scores:write' });
  const first = await post(`${target.scoreIngest}/v1/scores`, engine, { scores: grants.map(scoreOf) });
  if (first.status !== 202) throw new Error(`ingest-rate: the first scores answered ${first.status}`);
  const deadline = Date.now() + 60_000;
  for (const readApi of target.readApis)
    for (const grant of grants)
      while ((await latestDate(readApi, grant)) !== dateOf(0)) {
        if (Date.now() > deadline) throw new Error('ingest-rate: the first scores were not served within 60 s');
        await sleep(50);
      }
  return grants;
}

/** `seconds` of scores at `rate` a second; `grants` from ingestGrants, their days carried on from one rate to the next. */
export async function ingestAtRate(target: IngestTarget, grants: Grant[], rate: number, seconds: number): Promise<IngestRateFigures> {
  const engine = await signDevToken(target.secret, { scope: 'scores:write' });
  const perBatch = Math.max(1, Math.round((rate * TICK_MS) / 1000));
  if (perBatch > MAX_SCORES_PER_BATCH) throw new Error(`ingest-rate: at most ${(MAX_SCORES_PER_BATCH * 1000) / TICK_MS} scores a second`);
  const figures: IngestRateFigures = {
    rate,
    achieved: 0,
    everyReplica: [],
    perReplica: target.readApis.map(() => []),
    unseen: 0,
    batchMs: [],
  };
  const watches: Promise<void>[] = [];
  let next = 0;
  let acknowledged = 0;

  /** Until every replica serves the sample's date or a later one. */
  const watch = async (grant: Grant, date: string, ackAt: number) => {
    const seen = await Promise.all(
      target.readApis.map(async (readApi) => {
        while (performance.now() - ackAt < 10_000) {
          const latest = await latestDate(readApi, grant).catch(() => undefined);
          if (latest !== undefined && latest >= date) return performance.now() - ackAt;
          await sleep(POLL_MS);
        }
        return undefined;
      }),
    );
    if (seen.some((ms) => ms === undefined)) {
      figures.unseen += 1;
      return;
    }
    seen.forEach((ms, replica) => figures.perReplica[replica]!.push(ms!));
    figures.everyReplica.push(Math.max(...(seen as number[])));
  };

  const started = performance.now();
  const batches: Promise<void>[] = [];
  for (let tick = 0; performance.now() - started < seconds * 1000; tick += 1) {
    const scores = [];
    for (let i = 0; i < perBatch; i += 1) {
      const grant = grants[next++ % grants.length]!;
      grant.day += 1;
      scores.push(scoreOf(grant));
    }
    const sampled = grants[(next - 1) % grants.length]!;
    const sampledDate = dateOf(sampled.day);
    const sentAt = performance.now();
    batches.push(
      post(`${target.scoreIngest}/v1/scores`, engine, { scores }).then((answer) => {
        const ackAt = performance.now();
        if (answer.status !== 202) throw new Error(`ingest-rate: a batch answered ${answer.status}`);
        figures.batchMs.push(ackAt - sentAt);
        acknowledged += scores.length;
        watches.push(watch(sampled, sampledDate, ackAt));
      }),
    );
    const wait = started + (tick + 1) * TICK_MS - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await Promise.all(batches);
  figures.achieved = acknowledged / ((performance.now() - started) / 1000);
  await Promise.all(watches);
  return figures;
}
