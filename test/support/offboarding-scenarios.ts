import { aScoreSubmission, request } from '@rsd/testkit';
import type { AccessLogTopicRecords } from './access-log-topic';
import { eventually } from './embedded-process';
import { readableIn } from './leak-search';

/** What the offboarding scenario needs of a running product, whichever runtime. */
export interface OffboardingTarget {
  credentials: string;
  scoreIngest: string;
  readApi: string;
  /** A token of `org` with these scopes, signed as the product verifies them. */
  tokenFor(org: string, scope: string): Promise<string>;
  /** Every row or document of every store the product keeps, the event log and the offboardings' record aside, one string each. */
  storedRows(): Promise<string[]>;
  /** Everything the product's processes logged so far. */
  logLines(): string;
  /**
   * The distributed runtime's access-log topic (decision 56): what it holds of these grants, raw and opened
   * with the product's keys. The product trusts one proxy hop there, so that each read comes from an
   * address of its organization's own (X-Forwarded-For).
   */
  accessLogTopic?(clientIds: readonly string[]): Promise<AccessLogTopicRecords>;
}

export interface OffboardedPair {
  offboarded: { org: string; name: string; clientId: string };
  kept: { org: string; name: string; clientId: string; apiKey: string };
  /** What must not be readable anywhere once the organization is offboarded: its recipient's name, its grant, its scores as the views keep them. */
  traces: string[];
}

/**
 * Decision 56 on a running product: two organizations, each with a named grant, a score and a read;
 * one is offboarded (202, then `done` once every service has purged), after which no store and no log
 * line holds its recipient's name, its grant or its scores, and the other organization still reads.
 */
export async function offboardOneOfTwo(target: OffboardingTarget, orgs: { offboarded: string; kept: string }): Promise<OffboardedPair> {
  const names = { [orgs.offboarded]: `Offboarded Recipient ${orgs.offboarded}`, [orgs.kept]: `Kept Recipient ${orgs.kept}` };
  const scores = { [orgs.offboarded]: 61, [orgs.kept]: 88 };
  // Where each organization's recipient reads from (documentation ranges), when the product trusts the header.
  const addresses = { [orgs.offboarded]: '198.51.100.61', [orgs.kept]: '203.0.113.88' };
  const grants: Record<string, { clientId: string; apiKey: string }> = {};
  for (const org of [orgs.offboarded, orgs.kept]) {
    const admin = {
      authorization: `Bearer ${await target.tokenFor(org, 'authorizations:write scores:write')}`,
      'content-type': 'application/json',
    };
    const created = await request(`${target.credentials}/v1/organizations/${org}/authorizations`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        recipientType: 'auditor',
        recipientName: names[org],
        scopes: ['qr_score', 'pillar_breakdown', 'score_trend'],
      }),
    });
    expect(created.status).toBe(201);
    grants[org] = created.body as { clientId: string; apiKey: string };
    const submitted = await request(`${target.scoreIngest}/v1/scores`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify(aScoreSubmission({ organizationId: org, score: scores[org] })),
    });
    expect(submitted.status).toBe(202);
    // A read of each, so each has access-log records and usage.
    await eventually(async () => {
      const read = await request(`${target.readApi}/v1/customers/${grants[org]!.clientId}/score`, {
        headers: { 'x-api-key': grants[org]!.apiKey, 'x-forwarded-for': addresses[org]! },
      });
      return read.status === 200 ? read : undefined;
    }, 30_000);
  }
  const offboarded = { org: orgs.offboarded, name: names[orgs.offboarded]!, clientId: grants[orgs.offboarded]!.clientId };
  const kept = { org: orgs.kept, name: names[orgs.kept]!, ...grants[orgs.kept]! };
  const traces = [offboarded.name, offboarded.clientId, `"organizationId":"${orgs.offboarded}"`];
  const leaks = (rows: string[]) => rows.filter((row) => traces.some((trace) => row.includes(trace)));
  // The search finds them before, so that finding nothing after means something.
  await eventually(async () => (leaks(await target.storedRows()).length > 0 ? true : undefined), 30_000);

  const offboarder = { authorization: `Bearer ${await target.tokenFor(orgs.offboarded, 'organizations:delete')}` };
  const started = await request(`${target.credentials}/v1/organizations/${orgs.offboarded}?confirm=${orgs.offboarded}`, {
    method: 'DELETE',
    headers: offboarder,
  });
  expect(started.status).toBe(202);
  const done = await eventually(async () => {
    const answer = await request(`${target.credentials}/v1/organizations/${orgs.offboarded}/offboarding`, { headers: offboarder });
    return answer.body.status === 'done' ? answer.body : undefined;
  }, 60_000);
  expect(done).toMatchObject({ startedAt: started.body.startedAt, doneAt: expect.any(String) as string });

  expect(leaks(await target.storedRows())).toEqual([]);
  expect(target.logLines()).not.toContain(offboarded.name);
  if (target.accessLogTopic) {
    // The topic keeps both grants' reads until its retention, their addresses sealed under each grant's key: the
    // offboarded grant's no longer open (its key is destroyed), the other's still do.
    const topic = await eventually(async () => {
      const found = await target.accessLogTopic!([offboarded.clientId, kept.clientId]);
      const grantsRead = new Set(found.opened.map((record) => record.clientId));
      return grantsRead.has(offboarded.clientId) && grantsRead.has(kept.clientId) ? found : undefined;
    }, 30_000);
    expect(readableIn(topic.raw, Object.values(addresses))).toEqual([]);
    const addressesOf = (clientId: string) =>
      new Set(topic.opened.filter((record) => record.clientId === clientId).map((r) => r.clientAddress));
    expect(addressesOf(offboarded.clientId)).toEqual(new Set([null]));
    expect(addressesOf(kept.clientId)).toEqual(new Set([addresses[orgs.kept]]));
  }
  // The other organization is untouched: its recipient still reads its score, and its name is kept.
  const read = await request(`${target.readApi}/v1/customers/${kept.clientId}/score`, { headers: { 'x-api-key': kept.apiKey } });
  expect(read).toMatchObject({ status: 200, body: { score: scores[orgs.kept] } });
  expect((await target.storedRows()).some((row) => row.includes(kept.name))).toBe(true);
  return { offboarded, kept, traces };
}
