import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventually } from './embedded-process';
import * as orgAdmin from './organization-admin';

/**
 * Decision 45's lifecycle as a recipient meets it, written once and run on both runtimes (the embedded
 * product in test/e2e, the four processes on Kafka, MongoDB and Redis in test/distributed): real
 * receivers over real sockets, every signature checked with the official Standard Webhooks library
 * (`standardwebhooks`), and every payload with Ajv against the notifier's own OpenAPI `webhooks`.
 */
export interface LifecycleTarget {
  notifierUrl: string;
  credentialsUrl: string;
  scoreIngestUrl: string;
  /** An administrator's token for `org` (authorizations:write scores:write). */
  tokenFor(org: string): Promise<string>;
  /** Where the receivers listen, as the notifier reaches them. */
  receiverHost: string;
  /**
   * Makes the pending deliveries of a webhook look 24 h old (their first attempt moved back in the
   * store), so that the next failed retry is the last one: 24 h of failures without waiting 24 h.
   */
  ageFirstAttempts(webhookId: string): Promise<void>;
  /** The same runtime's notifier without WEBHOOK_ALLOW_PRIVATE_TARGETS (decision 28 as deployed), and where its grants are made. */
  strict: () => { notifierUrl: string; credentialsUrl: string; tokenFor(org: string): Promise<string> };
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** A receiver whose answer can be switched: 500 while `failing`, else 204. */
export interface SwitchableReceiver {
  url: string;
  received: Received[];
  failing: boolean;
  close(): Promise<void>;
}

/** Receivers a scenario suite starts as it goes, on `host()`, all closed by `closeAll` (its cleanUp). */
export function switchableReceivers(host: () => string): { start(): Promise<SwitchableReceiver>; closeAll(): Promise<void> } {
  const started: SwitchableReceiver[] = [];
  return {
    start: async () => {
      const receiver = await startSwitchableReceiver(host());
      started.push(receiver);
      return receiver;
    },
    closeAll: async () => {
      for (const receiver of started.splice(0)) await receiver.close();
    },
  };
}

export async function startSwitchableReceiver(host: string, failing = false): Promise<SwitchableReceiver> {
  const receiver = { url: '', received: [] as Received[], failing, close: () => Promise.resolve() };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answered = receiver.failing ? 500 : 204;
      receiver.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, host, done));
  receiver.url = `http://${host}:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () => new Promise<void>((done) => server.close(() => done()));
  return receiver;
}

/** The official library's verdict: true when the delivery verifies with `secret` (its timestamp within 5 minutes). */
export function verifiesWith(delivery: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    });
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

const typeOf = (delivery: Received) => (JSON.parse(delivery.body) as { type: string }).type;
const dataOf = (delivery: Received) => (JSON.parse(delivery.body) as { data: Record<string, unknown> }).data;

type Grade = 'Sustain' | 'Optimize' | 'Strengthen' | 'Improve' | 'Prioritize';

export function describeWebhookLifecycle(runtime: string, target: () => LifecycleTarget): void {
  describe(`the webhook lifecycle (decision 45) on the ${runtime} runtime`, () => {
    const receivers: SwitchableReceiver[] = [];
    let validatePayload: (delivery: Received) => string[];
    let orgs = 0;

    beforeAll(async () => {
      validatePayload = payloadValidator(await fetchDocument(target().notifierUrl));
    });

    afterAll(async () => {
      for (const receiver of receivers) await receiver.close();
    });

    async function receiver(failing = false): Promise<SwitchableReceiver> {
      const started = await startSwitchableReceiver(target().receiverHost, failing);
      receivers.push(started);
      return started;
    }

    /** A new organization of this run, its token, and a grant of it with `scopes`. */
    async function aGrant(scopes = ['qr_score'], on: Pick<LifecycleTarget, 'credentialsUrl' | 'tokenFor'> = target()) {
      orgs += 1;
      const org = `lifecycle-${runtime}-${Date.now().toString(36)}-${orgs}`;
      const token = await on.tokenFor(org);
      const credential = await orgAdmin.createAuthorization(on.credentialsUrl, org, token, {
        recipientType: 'insurance_provider',
        scopes,
      });
      const postScore = (scoreDate: string, score: number, grade: Grade = 'Strengthen') =>
        orgAdmin.postScore(target().scoreIngestUrl, token, aScoreSubmission({ organizationId: org, scoreDate, score, grade }));
      return { org, credential, postScore };
    }

    type Grant = Awaited<ReturnType<typeof aGrant>>;
    const webhooksUrl = (grant: Grant, notifierUrl = target().notifierUrl) =>
      `${notifierUrl}/v1/customers/${grant.credential.clientId}/webhooks`;
    const call = <T = Record<string, unknown>>(grant: Grant, path: string, method = 'GET', body?: unknown, notifierUrl?: string) =>
      request<T & { code?: string }>(`${webhooksUrl(grant, notifierUrl)}${path}`, {
        method,
        headers: { 'x-api-key': grant.credential.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    /** Once the notifier's own view knows the grant (at once on the embedded runtime, within a moment on the distributed one). */
    async function createWebhook(grant: Grant, body: Record<string, unknown>) {
      const created = await eventually(
        async () => {
          const answer = await call<{ id: string; secret: string; status: string }>(grant, '', 'POST', body);
          return answer.status === 404 && answer.body.code === 'CREDENTIAL_NOT_FOUND' ? undefined : answer;
        },
        20_000,
        250,
      );
      expect(created.status).toBe(201);
      return created.body;
    }

    /** A new grant, a receiver (failing at first when `failing`), and the grant's webhook for `events` on it. */
    async function aGrantWithWebhook(events: string[], failing = false) {
      const grant = await aGrant();
      const hooks = await receiver(failing);
      const webhook = await createWebhook(grant, { url: hooks.url, events });
      return { grant, hooks, webhook };
    }

    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    const until = <T>(check: () => T | undefined, timeoutMs = 15_000) => eventually(() => Promise.resolve(check()), timeoutMs, 25);
    // Long enough for an event to have passed the notifier, when what is shown is that nothing came of it.
    // Fixed, for want of a witness on both runtimes: the distributed notifier's queue and its position in
    // the log are not served (the embedded runtime has one, notifierSettled, but these scenarios run on both).
    const settle = (ms = 1_500) => new Promise((done) => setTimeout(done, ms));

    function expectValidAndSigned(delivery: Received, secret: string): void {
      expect(validatePayload(delivery)).toEqual([]);
      expect(verifiesWith(delivery, secret)).toBe(true);
    }

    test('when a webhook was disabled after 24 h of failures, then PATCH enabled:true brings it back: it gets the next change, not what happened while it was disabled', async () => {
      const { grant, hooks, webhook } = await aGrantWithWebhook(['score.updated'], true);
      await grant.postScore(daysAgo(3), 70);
      // The first failed attempt is recorded: from here on the store holds when the 24 h began.
      await eventually(async () => {
        const listed = await call<{ deliveries: unknown[] }>(grant, `/${webhook.id}/deliveries`);
        return listed.body.deliveries?.[0];
      });

      // Aged again on every look: a retry recorded in between would have written the real start back.
      const disabled = await eventually(
        async () => {
          await target().ageFirstAttempts(webhook.id);
          const listed = await call<{ webhooks: { id: string; status: string }[] }>(grant, '');
          return listed.body.webhooks?.find((found) => found.id === webhook.id && found.status === 'disabled');
        },
        45_000,
        2_000,
      );
      expect(disabled).toBeDefined();
      const attemptsWhenDisabled = hooks.received.length;
      hooks.failing = false;
      // While disabled, a change reaches no one, and is not sent once it is re-enabled either.
      await grant.postScore(daysAgo(2), 64);
      await settle();

      const enabled = await call(grant, `/${webhook.id}`, 'PATCH', { enabled: true });

      expect(enabled.status).toBe(200);
      expect(enabled.body).toMatchObject({ id: webhook.id, status: 'active', events: ['score.updated'] });
      expect(hooks.received).toHaveLength(attemptsWhenDisabled);
      await grant.postScore(daysAgo(1), 61);
      const next = await until(() => hooks.received[attemptsWhenDisabled]);
      await settle();
      expect(hooks.received).toHaveLength(attemptsWhenDisabled + 1);
      expect(next.answered).toBe(204);
      expect(dataOf(next)).toMatchObject({ clientId: grant.credential.clientId, score: 61 });
      expectValidAndSigned(next, webhook.secret);
    }, 90_000);

    test('when the secret is rotated with an overlap, then each delivery in the overlap carries both signatures, each verifying with the official library, and after it only the new one', async () => {
      const { grant, hooks, webhook } = await aGrantWithWebhook(['score.updated']);
      const overlapSeconds = 8;

      const rotated = await call<{ secret: string }>(grant, `/${webhook.id}/rotate-secret`, 'POST', { overlapSeconds });
      const overlapEnds = Date.now() + overlapSeconds * 1000;

      expect(rotated.status).toBe(201);
      expect(Object.keys(rotated.body)).toEqual(['secret']);
      expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(rotated.body.secret).not.toBe(webhook.secret);
      await grant.postScore(daysAgo(1), 71);
      const during = await until(() => hooks.received[0]);
      expect(Number(during.headers['webhook-timestamp']) * 1000).toBeLessThan(overlapEnds);
      expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expectValidAndSigned(during, rotated.body.secret);
      expect(verifiesWith(during, webhook.secret)).toBe(true);

      // The overlap's end, as the receiver sees it: test deliveries, asked for one at a time, carry both
      // signatures until one carries the new secret's alone, and that one is signed no earlier than a
      // second before the overlap ends (a slow machine's room; an overlap cut short would show seconds early).
      const ended = await eventually(
        async () => {
          const asked = await call<{ messageId: string }>(grant, `/${webhook.id}/test`, 'POST');
          expect(asked.status).toBe(202);
          const tested = await until(() => hooks.received.find((delivery) => delivery.headers['webhook-id'] === asked.body.messageId));
          expectValidAndSigned(tested, rotated.body.secret);
          return String(tested.headers['webhook-signature']).split(' ').length === 1 ? tested : undefined;
        },
        overlapSeconds * 1000 + 15_000,
        250,
      );
      expect(Number(ended.headers['webhook-timestamp']) * 1000).toBeGreaterThanOrEqual(overlapEnds - 1_000);
      expect(verifiesWith(ended, webhook.secret)).toBe(false);
      await grant.postScore(daysAgo(0), 69);
      const after = await until(() => hooks.received.filter((delivery) => typeOf(delivery) === 'score.updated')[1]);
      expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expectValidAndSigned(after, rotated.body.secret);
      expect(verifiesWith(after, webhook.secret)).toBe(false);
      // The list never shows a secret.
      expect(JSON.stringify((await call(grant, '')).body)).not.toContain(rotated.body.secret);
    }, 60_000);

    test('when a delivery is redelivered, then the receiver gets the same webhook-id and the same body again, newly signed', async () => {
      const { grant, hooks, webhook } = await aGrantWithWebhook(['score.updated']);
      await grant.postScore(daysAgo(1), 66);
      const original = await until(() => hooks.received[0]);
      const messageId = String(original.headers['webhook-id']);
      const attempts = await eventually(async () => {
        const listed = await call<{ deliveries: { messageId: string; status: string }[] }>(grant, `/${webhook.id}/deliveries`);
        return listed.body.deliveries?.find((attempt) => attempt.messageId === messageId && attempt.status === 'succeeded');
      });
      expect(attempts).toBeDefined();

      const asked = performance.now();
      const redelivered = await call(grant, `/${webhook.id}/deliveries/${messageId}/redeliver`, 'POST');

      expect(redelivered.status).toBe(202);
      expect(redelivered.body).toEqual({ messageId });
      const again = await until(() => hooks.received[1]);
      process.stderr.write(`[${runtime}] redelivery arrived ${(performance.now() - asked).toFixed(0)} ms after the request\n`);
      expect(again.headers['webhook-id']).toBe(messageId);
      expect(again.body).toBe(original.body);
      expectValidAndSigned(again, webhook.secret);
    }, 60_000);

    test('when a test delivery is asked for, then 202 names its webhook-id and a signed webhook.test arrives with it', async () => {
      const { grant, hooks, webhook } = await aGrantWithWebhook(['authorization.ended']);

      const asked = performance.now();
      const tested = await call<{ messageId: string }>(grant, `/${webhook.id}/test`, 'POST');

      expect(tested.status).toBe(202);
      const delivery = await until(() => hooks.received[0], 10_000);
      process.stderr.write(`[${runtime}] webhook.test arrived ${(performance.now() - asked).toFixed(0)} ms after the request\n`);
      expect(delivery.headers['webhook-id']).toBe(tested.body.messageId);
      expect(typeOf(delivery)).toBe('webhook.test');
      expect(dataOf(delivery)).toEqual({ webhookId: webhook.id });
      expectValidAndSigned(delivery, webhook.secret);
    }, 60_000);

    test('when scores go 72, 65, 58, 59, 40 (grades changing twice), then each condition fires exactly on the changes it names, and grade.changed is not filtered', async () => {
      const grant = await aGrant();
      const subscriptions = {
        every: { events: ['score.updated'] },
        below60: { events: ['score.updated'], conditions: { scoreBelow: 60 } },
        drop7: { events: ['score.updated'], conditions: { scoreDropAtLeast: 7 } },
        gradeChanged: { events: ['score.updated'], conditions: { gradeChanged: true } },
        below60OrDrop7: { events: ['score.updated'], conditions: { scoreBelow: 60, scoreDropAtLeast: 7 } },
        below50WithGrades: { events: ['score.updated', 'grade.changed'], conditions: { scoreBelow: 50 } },
      };
      const hooks: Record<string, { receiver: SwitchableReceiver; secret: string }> = {};
      for (const [name, body] of Object.entries(subscriptions)) {
        const hook = await receiver();
        hooks[name] = { receiver: hook, secret: (await createWebhook(grant, { url: hook.url, ...body })).secret };
      }
      const sequence: [number, Grade][] = [
        [72, 'Strengthen'],
        [65, 'Strengthen'],
        [58, 'Improve'],
        [59, 'Improve'],
        [40, 'Prioritize'],
      ];

      for (const [index, [score, grade]] of sequence.entries()) await grant.postScore(daysAgo(sequence.length - index), score, grade);

      await until(() => (hooks.every!.receiver.received.length >= 5 ? true : undefined), 20_000);
      await settle(2_000);
      const seen = (name: string) =>
        hooks[name]!.receiver.received.map((delivery) => {
          expectValidAndSigned(delivery, hooks[name]!.secret);
          const data = dataOf(delivery);
          return typeOf(delivery) === 'score.updated' ? data.score : `${String(data.from)}→${String(data.to)}`;
        });
      // Standard Webhooks promises no order between deliveries: what each got, as a set.
      const sorted = (values: unknown[]) => values.map(String).sort();
      expect(sorted(seen('every'))).toEqual(sorted([72, 65, 58, 59, 40]));
      expect(sorted(seen('below60'))).toEqual(sorted([58, 59, 40]));
      expect(sorted(seen('drop7'))).toEqual(sorted([65, 58, 40]));
      expect(sorted(seen('gradeChanged'))).toEqual(sorted([58, 40]));
      expect(sorted(seen('below60OrDrop7'))).toEqual(sorted([65, 58, 59, 40]));
      expect(sorted(seen('below50WithGrades'))).toEqual(sorted(['Strengthen→Improve', 'Improve→Prioritize', 40]));
    }, 90_000);

    test('when the inputs are bad, then each gets its documented 4xx and nothing changes', async () => {
      const { grant, hooks, webhook } = await aGrantWithWebhook(['score.updated']);
      const unknownId = 'wh_0000000000000000000000';
      const refusals: [string, string, string, unknown, number, string][] = [
        ['PATCH an unknown id', `/${unknownId}`, 'PATCH', { enabled: true }, 404, 'WEBHOOK_NOT_FOUND'],
        ['rotate an unknown id', `/${unknownId}/rotate-secret`, 'POST', { overlapSeconds: 60 }, 404, 'WEBHOOK_NOT_FOUND'],
        ['test an unknown id', `/${unknownId}/test`, 'POST', undefined, 404, 'WEBHOOK_NOT_FOUND'],
        [
          'redeliver on an unknown id',
          `/${unknownId}/deliveries/msg_0000000000000000/redeliver`,
          'POST',
          undefined,
          404,
          'WEBHOOK_NOT_FOUND',
        ],
        [
          'redeliver an unknown message',
          `/${webhook.id}/deliveries/msg_0000000000000000/redeliver`,
          'POST',
          undefined,
          404,
          'WEBHOOK_MESSAGE_NOT_FOUND',
        ],
        [
          'redeliver a malformed message id',
          `/${webhook.id}/deliveries/not-a-message/redeliver`,
          'POST',
          undefined,
          404,
          'WEBHOOK_MESSAGE_NOT_FOUND',
        ],
        ['an empty change', `/${webhook.id}`, 'PATCH', {}, 400, 'VALIDATION_FAILED'],
        ['an unknown condition', `/${webhook.id}`, 'PATCH', { conditions: { scoreAbove: 50 } }, 400, 'VALIDATION_FAILED'],
        ['a condition out of range', `/${webhook.id}`, 'PATCH', { conditions: { scoreBelow: 101 } }, 400, 'VALIDATION_FAILED'],
        ['a drop of 0', `/${webhook.id}`, 'PATCH', { conditions: { scoreDropAtLeast: 0 } }, 400, 'VALIDATION_FAILED'],
        ['gradeChanged false', `/${webhook.id}`, 'PATCH', { conditions: { gradeChanged: false } }, 400, 'VALIDATION_FAILED'],
        ['a condition that is not a number', `/${webhook.id}`, 'PATCH', { conditions: { scoreBelow: '60' } }, 400, 'VALIDATION_FAILED'],
        [
          'bad conditions at creation',
          '',
          'POST',
          { url: hooks.url, events: ['score.updated'], conditions: { scoreBelow: -1 } },
          400,
          'VALIDATION_FAILED',
        ],
        ['enabled that is not a boolean', `/${webhook.id}`, 'PATCH', { enabled: 'yes' }, 400, 'VALIDATION_FAILED'],
        ['overlapSeconds above 86400', `/${webhook.id}/rotate-secret`, 'POST', { overlapSeconds: 86_401 }, 400, 'VALIDATION_FAILED'],
        ['overlapSeconds below 0', `/${webhook.id}/rotate-secret`, 'POST', { overlapSeconds: -1 }, 400, 'VALIDATION_FAILED'],
        ['overlapSeconds not whole', `/${webhook.id}/rotate-secret`, 'POST', { overlapSeconds: 1.5 }, 400, 'VALIDATION_FAILED'],
        ['no overlapSeconds', `/${webhook.id}/rotate-secret`, 'POST', {}, 400, 'VALIDATION_FAILED'],
      ];
      for (const [name, path, method, body, status, code] of refusals) {
        const answer = await call(grant, path, method, body);
        expect({ name, status: answer.status, code: answer.body.code }).toEqual({ name, status, code });
      }
      const unchanged = await call<{ webhooks: unknown[] }>(grant, '');
      expect(unchanged.body.webhooks).toEqual([
        expect.objectContaining({ id: webhook.id, url: hooks.url, status: 'active', conditions: {} }),
      ]);
    }, 60_000);

    test('when a notifier runs without the development flag, then an http URL or a loopback, private or metadata target is refused with 400 WEBHOOK_TARGET_NOT_ALLOWED', async () => {
      const strict = target().strict();
      const grant = await aGrant(['qr_score'], strict);
      const create = (url: string) => call(grant, '', 'POST', { url, events: ['score.updated'] }, strict.notifierUrl);
      // Until the strict notifier's own view knows the grant.
      await eventually(
        async () => ((await create('http://hooks.example/x')).body.code === 'CREDENTIAL_NOT_FOUND' ? undefined : true),
        20_000,
        250,
      );

      for (const url of [
        'http://hooks.example/x',
        'https://127.0.0.1/x',
        'https://[::1]/x',
        'https://10.0.0.8/x',
        'https://169.254.169.254/x',
      ]) {
        const refused = await create(url);
        expect({ url, status: refused.status, code: refused.body.code }).toEqual({ url, status: 400, code: 'WEBHOOK_TARGET_NOT_ALLOWED' });
      }
      const listed = await call<{ webhooks: unknown[] }>(grant, '', 'GET', undefined, strict.notifierUrl);
      expect(listed.body.webhooks).toEqual([]);
    }, 60_000);
  });
}

export async function fetchDocument(notifierUrl: string): Promise<Record<string, unknown>> {
  const answer = await request<Record<string, unknown>>(`${notifierUrl}/v1/openapi.json`);
  expect(answer.status).toBe(200);
  return answer.body;
}

/**
 * Ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses) against the notifier's own document: the schema of
 * the `webhooks` entry named by the delivery's type. Returns the errors, none when it is valid.
 */
export function payloadValidator(document: Record<string, unknown>): (delivery: Received) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'https://notifier.test/openapi.json' });
  const webhooks = (document.webhooks ?? {}) as Record<
    string,
    { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }
  >;
  return (delivery) => {
    const type = typeOf(delivery);
    const ref = webhooks[type]?.post.requestBody.content['application/json']?.schema.$ref;
    if (!ref) return [`no entry for ${type} in the document's webhooks`];
    const validate = ajv.getSchema(`https://notifier.test/openapi.json${ref}`);
    if (!validate) return [`${ref} is not in the document`];
    return validate(JSON.parse(delivery.body))
      ? []
      : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
  };
}
