import { randomUUID } from 'node:crypto';
import { request } from '@rsd/testkit';
import { everyAnswerDocumented, type Answer } from './documented-answers.js';
import { eventually } from '../../../test/support/embedded-process.js';
import { startSwitchableReceiver } from '../../../test/support/webhook-lifecycle.js';
import {
  AccessReviewItemDecided,
  AccessReviewNotFound,
  AuthorizationInactive,
  AuthorizationNotFound,
  Client,
  ForbiddenOrganization,
  InvalidToken,
  OffboardingNotConfirmed,
  OffboardingNotFound,
  Organization,
  SignatureError,
  ValidationFailed,
  verifyAccessReviewReport,
  type Jwks,
  type ScoreSubmission,
} from '@resilience-score/client';
import type { ProductUnderTest } from './product-under-test.js';

/** What the product must be started with for this suite: the tests poll until it has caught up, well within this; receivers on loopback (decision 28's development flag). */
export const ORGANIZATION_SUITE_ENV = { RATE_LIMIT_PER_MINUTE: '1000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };

const GRADES = ['Prioritize', 'Improve', 'Strengthen', 'Optimize', 'Sustain'] as const;
const DAY = 86_400_000;

/**
 * The Organization client against the real product, on whichever runtime `running` gives (started with
 * ORGANIZATION_SUITE_ENV): every key delivery, rotation, revocation, claim links, the access log across
 * pages and usage; and a scoring engine publishing 25,000 scores from a generator, one batch of them
 * sent twice, every score then readable once. The organizations are named for this run: a distributed
 * runtime's event log may hold other runs' scores. Registers its hooks and describes where it is called.
 */
export function organizationSuite(running: () => ProductUnderTest): void {
  const RUN = randomUUID().slice(0, 8);
  const ORG = `sdk-organization-${RUN}`;
  const OTHER_ORG = `sdk-other-organization-${RUN}`;

  let product: ProductUnderTest;
  let token: string;
  /** Every answer of the credentials service and score ingest in this run, held against their OpenAPI documents at the end. */
  const answered: Answer[] = [];

  beforeAll(async () => {
    product = running();
    token = await product.token({ org: ORG, scope: 'authorizations:write scores:write' });
    const send = globalThis.fetch;
    jest.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const response = await send(input, init);
      const url = new URL(input instanceof Request ? input.url : input);
      if ([product.urls.credentials, product.urls.scoreIngest].includes(url.origin) && url.pathname.startsWith('/v1/')) {
        const json = response.headers.get('content-type')?.includes('json') ? await response.clone().json() : undefined;
        answered.push({ url, method: init?.method ?? 'GET', status: response.status, body: json });
      }
      return response;
    });
  });

  afterAll(() => {
    jest.restoreAllMocks();
  });

  const anOrganization = (options: Partial<ConstructorParameters<typeof Organization>[0]> = {}) =>
    new Organization({
      token,
      credentialsUrl: `${product.urls.credentials}/v1`,
      ingestUrl: `${product.urls.scoreIngest}/v1`,
      notifierUrl: `${product.urls.notifier}/v1`,
      ...options,
    });

  const aScore = (organizationId: string, daysAgo: number, calculatedAt?: string): ScoreSubmission => {
    const score = (daysAgo * 7) % 101;
    return {
      organizationId,
      scoreDate: new Date(Date.now() - daysAgo * DAY).toISOString().slice(0, 10),
      score,
      grade: GRADES[Math.min(Math.floor(score / 20), 4)]!,
      pillarScores: { structuralIntegrity: score, failureResistance: 50, deviceHealth: 60, recoveryCapability: 70 },
      ...(calculatedAt === undefined ? {} : { calculatedAt }),
    };
  };

  async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
    const collected: T[] = [];
    for await (const item of items) collected.push(item);
    return collected;
  }

  /** A reader once the read API knows the credential (its projection follows the event log). */
  async function readerFor(clientId: string, apiKey: string, fetch?: typeof globalThis.fetch, timeout?: number): Promise<Client> {
    const client = new Client({
      clientId,
      apiKey,
      baseUrl: `${product.urls.readApi}/v1`,
      notifierUrl: `${product.urls.notifier}/v1`,
      ...(fetch ? { fetch } : {}),
      ...(timeout ? { timeout } : {}),
    });
    await eventually(
      () =>
        client.score().then(
          () => true,
          (error: { code?: string }) => (error.code === 'CREDENTIAL_NOT_FOUND' ? undefined : true),
        ),
      120_000,
    );
    return client;
  }

  describe('authorizations', () => {
    const organization = () => anOrganization();

    beforeAll(async () => {
      await anOrganization().publishScores([aScore(ORG, 1)]);
    });

    test('when an authorization is created with the key in the response, then the key reads, and get, list and usage show it', async () => {
      const created = await organization().authorizations.create({
        recipientType: 'auditor',
        recipientName: 'Audit Co',
        scopes: ['qr_score'],
      });
      expect(created).toMatchObject({
        organizationId: ORG,
        recipientType: 'auditor',
        recipientName: 'Audit Co',
        status: 'active',
        keyClaimed: true,
      });
      expect(created.apiKey).toEqual(expect.any(String));

      // The reads usage counts (200 and 304 of the score), counted through the client's own fetch.
      let successfulReads = 0;
      const counting: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (
          (input instanceof Request ? input.url : input.toString()).endsWith('/score') &&
          (response.status === 200 || response.status === 304)
        )
          successfulReads += 1;
        return response;
      };
      const reader = await readerFor(created.clientId, created.apiKey, counting);
      await eventually(async () => ((await reader.score()).scoreDate === aScore(ORG, 1).scoreDate ? true : undefined));
      await reader.score();

      // Usage follows the reads a moment later.
      const usage = await eventually(async () => {
        const counted = await organization().authorizations.usage(created.clientId);
        return counted.last24h === successfulReads ? counted : undefined;
      });
      expect(usage).toEqual({ last24h: successfulReads, last30d: successfulReads, lastUsedAt: expect.any(String) });
      const { apiKey: _key, ...record } = created;
      const got = await organization().authorizations.get(created.clientId);
      expect(got).toEqual({ ...record, lastUsedAt: usage.lastUsedAt, usage: { last24h: usage.last24h, last30d: usage.last30d } });
      expect((await organization().authorizations.list()).map((item) => item.clientId)).toContain(created.clientId);
    });

    test('when an authorization is created with a claim link, then no key exists until claimed, and a new link ends the old one', async () => {
      const created = await organization().authorizations.create({
        recipientType: 'partner',
        scopes: ['qr_score'],
        keyDelivery: 'claimLink',
      });
      expect(created).toMatchObject({
        keyClaimed: false,
        claim: { url: expect.stringContaining('/claim/'), expiresAt: expect.any(String) },
      });
      expect(Object.keys(created)).not.toContain('apiKey');

      const again = await organization().authorizations.claimLink(created.clientId, { claimValidSeconds: 3600 });
      expect(again.claim.url).not.toBe(created.claim.url);
      const old = await request(created.claim.url, { method: 'POST', headers: { accept: 'application/json' } });
      expect(old.status).toBe(404);
      const claimed = await request<{ clientId: string; apiKey: string }>(again.claim.url, {
        method: 'POST',
        headers: { accept: 'application/json' },
      });
      expect(claimed.status).toBe(201);

      await readerFor(created.clientId, claimed.body.apiKey);
      expect(await organization().authorizations.get(created.clientId)).toMatchObject({ keyClaimed: true, claimedAt: expect.any(String) });
    });

    test('when a key is rotated without overlap and then revoked twice, then the new key reads, the old one does not, and revoking again answers the same record', async () => {
      const created = await organization().authorizations.create({ recipientType: 'insurance_provider', scopes: ['qr_score'] });
      await readerFor(created.clientId, created.apiKey);

      const rotated = await organization().authorizations.rotate(created.clientId, { overlapSeconds: 0 });

      expect(rotated.apiKey).not.toBe(created.apiKey);
      expect(rotated.previousKeyExpiresAt).toBeNull();
      const fresh = await readerFor(created.clientId, rotated.apiKey);
      await expect(fresh.score()).resolves.toMatchObject({ clientId: created.clientId });
      await eventually(() =>
        new Client({ clientId: created.clientId, apiKey: created.apiKey, baseUrl: `${product.urls.readApi}/v1` }).score().then(
          () => undefined,
          (error: { code?: string }) => (error.code === 'INVALID_API_KEY' ? true : undefined),
        ),
      );

      const revoked = await organization().authorizations.revoke(created.clientId);
      const revokedAgain = await organization().authorizations.revoke(created.clientId);
      expect(revoked).toMatchObject({ status: 'revoked', revokedAt: expect.any(String) });
      expect(revokedAgain.revokedAt).toBe(revoked.revokedAt);
      await expect(organization().authorizations.rotate(created.clientId)).rejects.toBeInstanceOf(AuthorizationInactive);
    });

    test('when reads are made, then the access log yields every one, newest first, across pages of one', async () => {
      const created = await organization().authorizations.create({ recipientType: 'auditor', scopes: ['qr_score'] });
      const reader = await readerFor(created.clientId, created.apiKey);
      for (let i = 0; i < 3; i += 1) await reader.score();

      const entries = await eventually(async () => {
        const listed = await all(organization().authorizations.accessLog(created.clientId, { limit: 1 }));
        return listed.filter((entry) => entry.status === 200 || entry.status === 304).length >= 4 ? listed : undefined;
      });

      expect(entries.every((entry) => entry.resource === 'score')).toBe(true);
      const times = entries.map((entry) => entry.at);
      expect([...times].sort().reverse()).toEqual(times);
      expect(new Set(entries.map((entry) => entry.requestId)).size).toBe(entries.length);
    });

    test('when a call is refused, then its error class says why', async () => {
      await expect(organization().authorizations.get('rs_live_AAAAAAAAAAAAAAAAAAAAAAAAAA')).rejects.toBeInstanceOf(AuthorizationNotFound);
      await expect(anOrganization({ organizationId: OTHER_ORG }).authorizations.list()).rejects.toBeInstanceOf(ForbiddenOrganization);
      await expect(anOrganization({ token: `${token}x` }).authorizations.list()).rejects.toBeInstanceOf(InvalidToken);
      const refused = organization().authorizations.create({ recipientType: 'auditor', scopes: [] });
      await expect(refused).rejects.toBeInstanceOf(ValidationFailed);
      await expect(refused).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED', details: expect.any(Array) });
    });
  });

  describe('access reviews', () => {
    // An organization of its own: a review takes every grant active in it.
    const REVIEWED_ORG = `sdk-reviews-${RUN}`;
    let reviewer: Organization;

    beforeAll(async () => {
      reviewer = anOrganization({ token: await product.token({ org: REVIEWED_ORG, scope: 'authorizations:write' }) });
    });

    test('when a review is created, paged through, decided and reported, then each call answers what the API says and the report verifies offline', async () => {
      const grants = [];
      for (const recipientType of ['auditor', 'partner', 'insurance_provider'] as const)
        grants.push(await reviewer.authorizations.create({ recipientType, scopes: ['qr_score'] }));
      const dueAt = new Date(Date.now() + DAY).toISOString();
      const first = await reviewer.accessReviews.create({ dueAt, onOverdue: 'keep' });
      const second = await reviewer.accessReviews.create({ dueAt, onOverdue: 'revoke' });
      expect(first).toMatchObject({
        organizationId: REVIEWED_ORG,
        dueAt,
        onOverdue: 'keep',
        status: 'open',
        createdBy: { type: 'person', via: 'sdk' },
        progress: { total: 3, decided: 0, kept: 0, revoked: 0, pending: 3 },
      });

      // Pages of one, newest first, read with a token that only reads.
      const readOnly = anOrganization({ token: await product.token({ org: REVIEWED_ORG, scope: 'authorizations:read' }) });
      expect((await all(readOnly.accessReviews.list({ limit: 1 }))).map((review) => review.reviewId)).toEqual([
        second.reviewId,
        first.reviewId,
      ]);

      const [kept, revoked] = grants.map((grant) => grant.clientId) as [string, string];
      await reviewer.accessReviews.decide(first.reviewId, kept, { decision: 'keep', note: 'still audits us' });
      const decided = await reviewer.accessReviews.decide(first.reviewId, revoked, { decision: 'revoke' });
      expect(decided.progress).toEqual({ total: 3, decided: 2, kept: 1, revoked: 1, pending: 1 });
      expect(decided.items.find((item) => item.clientId === kept)).toMatchObject({
        decision: 'keep',
        note: 'still audits us',
        overdue: false,
        decidedBy: { type: 'person', via: 'sdk' },
      });
      expect(await reviewer.authorizations.get(revoked)).toMatchObject({ status: 'revoked', revocationReason: 'access_review' });
      expect(await readOnly.accessReviews.get(first.reviewId)).toEqual(decided);

      // A decision stands; an unknown review is not found.
      const again = reviewer.accessReviews.decide(first.reviewId, kept, { decision: 'revoke' });
      await expect(again).rejects.toBeInstanceOf(AccessReviewItemDecided);
      await expect(again).rejects.toMatchObject({ status: 409, code: 'ACCESS_REVIEW_ITEM_DECIDED', requestId: expect.any(String) });
      const unknown = reviewer.accessReviews.get('arv_000000000000000000000000');
      await expect(unknown).rejects.toBeInstanceOf(AccessReviewNotFound);
      await expect(unknown).rejects.toMatchObject({ status: 404, code: 'ACCESS_REVIEW_NOT_FOUND' });

      // The report, checked offline against the key set saved from the read API; one changed byte fails.
      const signed = await reviewer.accessReviews.report(first.reviewId);
      expect(signed.report).toMatchObject({ reviewId: first.reviewId, progress: decided.progress });
      const keySet = (await request<Jwks>(`${product.urls.readApi}/.well-known/jwks.json`)).body;
      const verified = verifyAccessReviewReport(signed, keySet);
      expect(verified).toEqual({ report: signed.report, kid: expect.any(String) });
      expect(reviewer.accessReviews.verify(signed.jws, keySet)).toEqual(verified);
      const [header, payload, signature] = signed.jws.split('.') as [string, string, string];
      const bytes = Buffer.from(payload, 'base64url');
      bytes[10] = bytes[10]! ^ 0x01;
      expect(() => verifyAccessReviewReport(`${header}.${bytes.toString('base64url')}.${signature}`, keySet)).toThrow(SignatureError);

      const csv = await reviewer.accessReviews.report(first.reviewId, { format: 'csv' });
      const lines = csv.trimEnd().split('\r\n');
      expect(lines[0]).toMatch(/^clientId,recipientType,recipientName,scopes,lastUsedAt,readsInPeriod,decision,overdue,note,/);
      expect(lines).toHaveLength(1 + grants.length);
      expect(lines.find((line) => line.startsWith(`${kept},`))).toContain(',keep,false,still audits us,');
    });
  });

  describe('offboarding and erasure', () => {
    test("when a grant's recipient is erased and the organization offboarded, then each answers what the API says and the offboarding is followed to done", async () => {
      // An organization of its own, which the test ends.
      const DEPARTING = `sdk-offboarded-${RUN}`;
      const departing = anOrganization({
        token: await product.token({ org: DEPARTING, scope: 'authorizations:write organizations:delete' }),
      });
      const grant = await departing.authorizations.create({
        recipientType: 'auditor',
        scopes: ['qr_score'],
        recipientName: 'Ada Lovelace',
      });

      expect(await departing.authorizations.erase(grant.clientId)).toEqual({
        subject: `grant:${grant.clientId}`,
        erasedAt: expect.any(String),
      });
      expect(await departing.authorizations.get(grant.clientId)).toMatchObject({ recipientName: null, status: 'active' });
      await expect(departing.offboarding()).rejects.toBeInstanceOf(OffboardingNotFound);
      await expect(departing.offboard({ confirm: OTHER_ORG })).rejects.toBeInstanceOf(OffboardingNotConfirmed);

      const started = await departing.offboard({ confirm: DEPARTING });

      expect(started).toEqual({ status: expect.stringMatching(/^(pending|done)$/), startedAt: expect.any(String), doneAt: started.doneAt });
      const done = await eventually(async () => {
        const offboarding = await departing.offboarding();
        return offboarding.status === 'done' ? offboarding : undefined;
      }, 60_000);
      expect(done).toEqual({ status: 'done', startedAt: started.startedAt, doneAt: expect.any(String) });
      await expect(departing.offboard({ confirm: DEPARTING })).resolves.toEqual(done);
      await expect(departing.authorizations.get(grant.clientId)).rejects.toBeInstanceOf(AuthorizationNotFound);
    }, 90_000);
  });

  describe('a scoring engine publishing', () => {
    const ORGANIZATIONS = Array.from({ length: 25 }, (_, i) => `sdk-engine-${RUN}-${i}`);
    const DATES = 1000;
    /** Every score's calculation time: what the engine would stamp, the same for a score sent twice. */
    const calculatedAt = new Date(Date.now() - 3_600_000).toISOString();
    /** The organization whose batch is sent twice: the first batch, which holds all its scores, its latest too. */
    const TWICE = ORGANIZATIONS[0]!;

    function* scores(): Generator<ScoreSubmission> {
      for (const organizationId of ORGANIZATIONS)
        for (let daysAgo = DATES; daysAgo >= 1; daysAgo -= 1) yield aScore(organizationId, daysAgo, calculatedAt);
    }
    /** The next `count` items of `source`, leaving it open for the rest (a for...of would close it). */
    function* take<T>(source: Iterator<T>, count: number): Generator<T> {
      for (let i = 0; i < count; i += 1) {
        const next = source.next();
        if (next.done) return;
        yield next.value;
      }
    }

    test('when 25,000 scores come from a generator and one batch is sent again, then every score is readable once and the repeat made no new version', async () => {
      // A scoring engine's token: scores:write, and no organization of its own.
      const engine = anOrganization({ token: await product.token({ scope: 'scores:write' }) });
      const readerOf = async (organizationId: string) => {
        const owner = anOrganization({ token: await product.token({ org: organizationId, scope: 'authorizations:write' }) });
        const created = await owner.authorizations.create({ recipientType: 'auditor', scopes: ['qr_score', 'score_trend'] });
        // While the read API works through the scores, on a loaded machine a page may take longer than the default 10 s.
        return readerFor(created.clientId, created.apiKey, undefined, 60_000);
      };
      const source = scores();

      // The first batch, then the same batch again. A version the repeat made would be a new latest score,
      // which the notifier announces as score.updated to a webhook created before it: the webhook hears
      // nothing until the engine sends a newer score.
      let started = performance.now();
      const first = await engine.publishScores(take(source, 1000));
      let publishing = performance.now() - started;
      const twice = await readerOf(TWICE);
      const receiver = await startSwitchableReceiver('127.0.0.1');
      try {
        const webhook = await eventually(() => twice.webhooks.create(receiver.url, ['score.updated']).catch(() => undefined), 120_000);
        const again = await engine.publishScores(take(scores(), 1000));
        const newer = aScore(TWICE, 0, new Date().toISOString());
        await engine.publishScores([newer]);

        const heard = await eventually(() => Promise.resolve(receiver.received[0]), 180_000);
        expect(JSON.parse(heard.body)).toMatchObject({ type: 'score.updated', data: { scoreDate: newer.scoreDate, score: newer.score } });
        const attempts = await eventually(async () => {
          const listed = await twice.webhooks.deliveries(webhook.id);
          return listed.some((attempt) => attempt.status === 'succeeded') ? listed : undefined;
        });
        expect(attempts.map((attempt) => [attempt.eventType, attempt.messageId])).toEqual([['score.updated', heard.headers['webhook-id']]]);
        expect(receiver.received).toHaveLength(1);
        expect(again).toEqual({ accepted: 1000, batches: 1 });
      } finally {
        await receiver.close();
      }

      // The rest of the generator.
      started = performance.now();
      const rest = await engine.publishScores(source);
      publishing += performance.now() - started;
      expect([first.accepted + rest.accepted, first.batches + rest.batches]).toEqual([25_000, 25]);

      // Every score once: each organization's latest is the newest it was sent, and its history every date
      // once with the score sent for it (the organization sent twice, and the newer score after).
      for (const organizationId of ORGANIZATIONS) {
        const reader = organizationId === TWICE ? twice : await readerOf(organizationId);
        const expected = Array.from({ length: DATES + 1 }, (_, n) => aScore(organizationId, n)).slice(organizationId === TWICE ? 0 : 1);
        const history = await eventually(async () => {
          const items = await all(reader.history({ from: aScore(organizationId, DATES).scoreDate, limit: 366 }));
          return items.length >= expected.length ? items : undefined;
        }, 300_000);
        expect(history.map((item) => [item.scoreDate, item.score])).toEqual(expected.map((score) => [score.scoreDate, score.score]));
        expect(await reader.score()).toMatchObject({
          scoreDate: expected[0]!.scoreDate,
          score: expected[0]!.score,
          grade: expected[0]!.grade,
        });
      }
      process.stderr.write(
        `[sdk] 25,000 scores published in ${(publishing / 1000).toFixed(1)} s; the rest read back ${((performance.now() - started) / 1000).toFixed(1)} s after its first was sent\n`,
      );
    }, 600_000);
  });

  const ORGANIZATION_OPERATIONS = [
    'createAuthorization',
    'listAuthorizations',
    'getAuthorization',
    'rotateAuthorizationKey',
    'revokeAuthorization',
    'issueClaimLink',
    'listAccessLog',
    'submitScores',
    'createAccessReview',
    'listAccessReviews',
    'getAccessReview',
    'decideAccessReviewItem',
    'getAccessReviewReport',
    'eraseRecipient',
    'offboardOrganization',
    'getOffboarding',
  ];

  everyAnswerDocumented(
    'the Organization client',
    { answered, origins: () => [product.urls.credentials, product.urls.scoreIngest] },
    ORGANIZATION_OPERATIONS,
  );
}
