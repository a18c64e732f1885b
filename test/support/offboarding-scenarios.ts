import { aScoreSubmission, request } from '@rsd/testkit';
import { eventually } from './embedded-process';

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
        headers: { 'x-api-key': grants[org]!.apiKey },
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
  // The other organization is untouched: its recipient still reads its score, and its name is kept.
  const read = await request(`${target.readApi}/v1/customers/${kept.clientId}/score`, { headers: { 'x-api-key': kept.apiKey } });
  expect(read).toMatchObject({ status: 200, body: { score: scores[orgs.kept] } });
  expect((await target.storedRows()).some((row) => row.includes(kept.name))).toBe(true);
  return { offboarded, kept, traces };
}
