import { request, signToken } from '@rsd/testkit';
import { startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';

const ORG = 'acme';

describe('credentials service: access reviews (decision 54), their pages and refusals', () => {
  let h: CredentialsHarness;
  let writer: string;

  const reviews = (org = ORG) => `${h.app.baseUrl}/v1/organizations/${org}/access-reviews`;
  const call = (url: string, method = 'GET', body?: object, bearer = writer) =>
    request(url, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const dueIn = (days: number) => new Date(h.clock.now().getTime() + days * 86_400_000).toISOString();

  beforeEach(async () => {
    h = await startCredentials();
    writer = await signToken({ org: ORG, scope: 'authorizations:write', sub: 'alice' });
  });

  afterEach(() => h.close());

  test('when reviews are listed a page at a time, then they come newest first and the cursor leads to the rest; a cursor not given is refused', async () => {
    const made: string[] = [];
    for (let day = 0; day < 3; day += 1) {
      h.clock.set(new Date(h.clock.now().getTime() + 1_000));
      made.push((await call(reviews(), 'POST', { dueAt: dueIn(30), onOverdue: 'keep' })).body.reviewId as string);
    }
    const reader = await signToken({ org: ORG, scope: 'authorizations:read' });

    const first = await call(`${reviews()}?limit=2`, 'GET', undefined, reader);
    const second = await call(`${reviews()}?limit=2&cursor=${first.body.nextCursor as string}`, 'GET', undefined, reader);

    expect([...first.body.items, ...second.body.items].map((review: { reviewId: string }) => review.reviewId)).toEqual([...made].reverse());
    expect(second.body.nextCursor).toBeNull();
    expect((await call(`${reviews()}?cursor=bm90LWEtY3Vyc29y`)).body).toMatchObject({ code: 'INVALID_PARAMETER' });
    expect((await call(`${reviews()}?limit=501`)).body).toMatchObject({ code: 'INVALID_PARAMETER' });
  });

  test('when the caller may only read, or administers another organization, then it cannot begin a review, and another organization’s review is not found', async () => {
    const created = await call(reviews(), 'POST', { dueAt: dueIn(1), onOverdue: 'revoke' });
    const reader = await signToken({ org: ORG, scope: 'authorizations:read' });
    const other = await signToken({ org: 'other-org', scope: 'authorizations:write' });

    expect((await call(reviews(), 'POST', { dueAt: dueIn(1), onOverdue: 'revoke' }, reader)).body.code).toBe('INSUFFICIENT_SCOPE');
    expect((await call(`${reviews()}/${created.body.reviewId as string}`, 'GET', undefined, other)).body.code).toBe(
      'FORBIDDEN_ORGANIZATION',
    );
    expect((await call(`${reviews('other-org')}/${created.body.reviewId as string}`, 'GET', undefined, other)).body.code).toBe(
      'ACCESS_REVIEW_NOT_FOUND',
    );
    expect((await call(`${reviews()}/not-a-review-id/report`)).body.code).toBe('ACCESS_REVIEW_NOT_FOUND');
  });

  test('when a body is not what a review or a decision takes, then each problem is named', async () => {
    const bad = await call(reviews(), 'POST', { dueAt: '2026-01-01', onOverdue: 'delete', extra: 1 });
    expect(bad.status).toBe(400);
    expect((bad.body.details as { path: string }[]).map((detail) => detail.path).sort()).toEqual(['dueAt', 'extra', 'onOverdue']);

    const created = await call(reviews(), 'POST', { dueAt: dueIn(1), onOverdue: 'keep' });
    const item = `${reviews()}/${created.body.reviewId as string}/items/rs_AAAAAAAAAAAAAAAAAAAAAAAA`;
    expect((await call(item, 'PUT', { decision: 'keep', note: 'x'.repeat(1001) })).body.details).toEqual([
      expect.objectContaining({ path: 'note' }),
    ]);
    expect((await call(item, 'POST', { decision: 'keep' })).status).toBe(405);
  });
});
