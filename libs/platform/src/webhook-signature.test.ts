import { newWebhookSecret, signWebhook, verifyWebhook, webhookHeaders, WEBHOOK_HEADERS, type ReceivedWebhook } from './webhook-signature';

/**
 * The vector of the Standard Webhooks reference implementation (standard-webhooks/standard-webhooks,
 * libraries/javascript/src/webhook.test.ts, "sign function works"; the other languages' libraries
 * test the same one). The specification's own text gives no complete example.
 */
const vector = {
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const sentAt = new Date(vector.timestamp * 1000);
const received = (fields: Partial<ReceivedWebhook> = {}): ReceivedWebhook => ({
  id: vector.id,
  timestamp: String(vector.timestamp),
  signature: vector.signature,
  body: vector.body,
  ...fields,
});

describe('signWebhook', () => {
  test('when the reference vector is signed, then the signature is the published one', () => {
    expect(signWebhook(vector)).toBe(vector.signature);
  });

  test('when the body is given as bytes, then the signature is the same as for the string', () => {
    expect(signWebhook({ ...vector, body: Buffer.from(vector.body) })).toBe(vector.signature);
  });

  test('when the headers are made, then they carry the id, the timestamp and the signature', () => {
    expect(webhookHeaders(vector)).toEqual({
      [WEBHOOK_HEADERS.id]: vector.id,
      [WEBHOOK_HEADERS.timestamp]: '1614265330',
      [WEBHOOK_HEADERS.signature]: vector.signature,
    });
  });

  test.each([
    ['an id with a "."', { id: 'msg_a.b' }],
    ['an empty id', { id: '' }],
    ['a timestamp with a fraction of a second', { timestamp: 1614265330.5 }],
    ['a negative timestamp', { timestamp: -1 }],
  ])('when the message has %s, then signing refuses it', (_case, fields) => {
    expect(() => signWebhook({ ...vector, ...fields })).toThrow();
  });

  test.each([
    ['no whsec_ prefix', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['a key shorter than 24 bytes', 'whsec_c2hvcnQ='],
    ['a character outside base64', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!'],
    ['base64 without its padding', `whsec_${Buffer.alloc(25, 7).toString('base64').replace(/=+$/, '')}`],
    ['nothing after the prefix', 'whsec_'],
  ])('when the secret has %s, then signing refuses it without echoing it', (_case, secret) => {
    expect(() => signWebhook({ ...vector, secret })).toThrow(/^not a webhook secret: expected whsec_ and the base64 of 24 to 64 bytes$/);
  });
});

describe('webhookHeaders during a secret rotation', () => {
  test('when also signed with the previous secret, then the header carries both signatures, the current first, and each verifies alone', () => {
    const current = newWebhookSecret();
    const previous = newWebhookSecret();
    const message = { id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1_614_265_330, body: '{"test": 2432232314}' };

    const headers = webhookHeaders({ ...message, secret: current, alsoSignedWith: [previous] });

    const signatures = headers[WEBHOOK_HEADERS.signature]!.split(' ');
    expect(signatures).toEqual([signWebhook({ ...message, secret: current }), signWebhook({ ...message, secret: previous })]);
    const received: ReceivedWebhook = {
      id: message.id,
      timestamp: String(message.timestamp),
      signature: headers[WEBHOOK_HEADERS.signature],
      body: message.body,
    };
    const now = new Date(message.timestamp * 1000);
    expect(verifyWebhook(received, current, { now }).outcome).toBe('verified');
    expect(verifyWebhook(received, previous, { now }).outcome).toBe('verified');
    expect(verifyWebhook(received, newWebhookSecret(), { now }).outcome).toBe('refused');
  });
});

describe('newWebhookSecret', () => {
  test('when a secret is made, then it is whsec_ and the base64 of 32 bytes, different each time, and signs', () => {
    const secrets = [newWebhookSecret(), newWebhookSecret()];

    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
      expect(signWebhook({ ...vector, secret })).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    }
    expect(secrets[0]).not.toBe(secrets[1]);
  });
});

describe('verifyWebhook', () => {
  test('when the reference vector arrives on time, then it verifies', () => {
    expect(verifyWebhook(received(), vector.secret, { now: sentAt })).toEqual({
      outcome: 'verified',
      id: vector.id,
      timestamp: vector.timestamp,
    });
  });

  test('when one byte of the body is changed, then it is refused', () => {
    expect(verifyWebhook(received({ body: '{"test": 2432232315}' }), vector.secret, { now: sentAt })).toEqual({
      outcome: 'refused',
      reason: 'no-matching-signature',
    });
    expect(verifyWebhook(received({ body: '{"test":2432232314}' }), vector.secret, { now: sentAt })).toMatchObject({
      outcome: 'refused',
    });
  });

  test('when the id or the timestamp was changed, or another secret is used, then it is refused', () => {
    const other = newWebhookSecret();

    expect(verifyWebhook(received({ id: 'msg_p5jXN8AQM9LWM0D4loKWxJel' }), vector.secret, { now: sentAt })).toMatchObject({
      reason: 'no-matching-signature',
    });
    expect(verifyWebhook(received({ timestamp: '1614265331' }), vector.secret, { now: sentAt })).toMatchObject({
      reason: 'no-matching-signature',
    });
    expect(verifyWebhook(received(), other, { now: sentAt })).toMatchObject({ reason: 'no-matching-signature' });
  });

  test('when several signatures are sent (a secret rotation), then any matching v1 one verifies; other versions are skipped', () => {
    const wrong = 'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=';
    const signature = [wrong, 'v1a,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=', vector.signature, 'garbage'].join(' ');

    expect(verifyWebhook(received({ signature }), vector.secret, { now: sentAt })).toMatchObject({ outcome: 'verified' });
    expect(
      verifyWebhook(received({ signature: [wrong, 'v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='].join(' ') }), vector.secret, {
        now: sentAt,
      }),
    ).toMatchObject({ reason: 'no-matching-signature' });
  });

  test('when the signature is cut short or empty after the version, then it is refused', () => {
    for (const signature of [vector.signature.slice(0, 8), 'v1,', vector.signature.slice(0, -1)]) {
      expect(verifyWebhook(received({ signature }), vector.secret, { now: sentAt })).toMatchObject({ reason: 'no-matching-signature' });
    }
  });

  test('when the timestamp is just within the tolerance either side, then it verifies; just outside, it is refused', () => {
    const fiveMinutes = 5 * 60 * 1000;
    const at = (offsetMs: number) => ({ now: new Date(sentAt.getTime() + offsetMs) });

    expect(verifyWebhook(received(), vector.secret, at(fiveMinutes))).toMatchObject({ outcome: 'verified' });
    expect(verifyWebhook(received(), vector.secret, at(-fiveMinutes))).toMatchObject({ outcome: 'verified' });
    expect(verifyWebhook(received(), vector.secret, at(fiveMinutes + 1000))).toEqual({
      outcome: 'refused',
      reason: 'timestamp-outside-tolerance',
    });
    expect(verifyWebhook(received(), vector.secret, at(-fiveMinutes - 1000))).toMatchObject({ reason: 'timestamp-outside-tolerance' });
    expect(verifyWebhook(received(), vector.secret, { ...at(60_000), toleranceSeconds: 30 })).toMatchObject({
      reason: 'timestamp-outside-tolerance',
    });
  });

  test.each([
    ['no webhook-id', { id: undefined }, 'missing-header'],
    ['no webhook-timestamp', { timestamp: undefined }, 'missing-header'],
    ['an empty webhook-signature', { signature: '' }, 'missing-header'],
    ['a timestamp that is not whole seconds', { timestamp: '1614265330.0' }, 'invalid-header'],
    ['a timestamp with trailing text', { timestamp: '1614265330abc' }, 'invalid-header'],
    ['an id with a "."', { id: 'msg.1' }, 'invalid-header'],
  ])('when the delivery has %s, then it is refused before any signature is computed', (_case, fields, reason) => {
    expect(verifyWebhook(received(fields), vector.secret, { now: sentAt })).toEqual({ outcome: 'refused', reason });
  });

  test('when the recipient’s secret is malformed, then verification throws: it is configuration, not a bad delivery', () => {
    expect(() => verifyWebhook(received(), 'not-a-secret', { now: sentAt })).toThrow(/not a webhook secret/);
  });
});
