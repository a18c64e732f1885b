import {
  changedWebhook,
  disabledReasonOf,
  hearsOf,
  previousSecretAt,
  reenableRefusal,
  rotatedWebhook,
  type WebhookState,
} from './webhook-lifecycle';

const NOW = new Date('2026-11-21T08:00:00.000Z');
const aWebhook = (overrides: Partial<WebhookState> = {}): WebhookState => ({
  url: 'https://hooks.example.com/a',
  events: ['score.updated'],
  status: 'active',
  disabledAt: null,
  sealedSecret: 'sealed-1',
  ...overrides,
});

describe('changedWebhook (decision 45)', () => {
  test('when only some fields are given, then only they change; conditions are replaced as a whole', () => {
    const webhook = aWebhook({ conditions: { scoreBelow: 60, gradeChanged: true } });

    const changed = changedWebhook(webhook, { url: 'https://hooks.example.com/b', conditions: { scoreDropAtLeast: 5 } }, NOW);

    expect(changed).toEqual({ ...webhook, url: 'https://hooks.example.com/b', conditions: { scoreDropAtLeast: 5 } });
  });

  test('when a webhook disabled after failures is enabled, then it is active, undated, and hears of events from now', () => {
    const changed = changedWebhook(aWebhook({ status: 'disabled', disabledAt: '2026-11-20T00:00:00.000Z' }), { enabled: true }, NOW);

    expect(changed).toMatchObject({ status: 'active', disabledAt: null, activeSince: NOW.toISOString() });
  });

  test('when an active webhook is enabled, then nothing changes (it keeps hearing of what it heard of)', () => {
    const webhook = aWebhook({ activeSince: '2026-11-01T00:00:00.000Z' });

    expect(changedWebhook(webhook, { enabled: true }, NOW)).toEqual(webhook);
  });

  test('when enabled is false, then an active webhook is paused and one disabled after failures stays disabled', () => {
    expect(changedWebhook(aWebhook(), { enabled: false }, NOW).status).toBe('paused');
    expect(changedWebhook(aWebhook({ status: 'disabled', disabledAt: NOW.toISOString() }), { enabled: false }, NOW).status).toBe(
      'disabled',
    );
  });
});

describe('rotatedWebhook and previousSecretAt (decision 45)', () => {
  test('when rotated with an overlap, then the old secret signs until it ends, and not from then on', () => {
    const rotated = rotatedWebhook(aWebhook(), 'sealed-2', 60, NOW);

    expect(rotated).toMatchObject({ sealedSecret: 'sealed-2', previousSealedSecret: 'sealed-1' });
    expect(previousSecretAt(rotated, new Date(NOW.getTime() + 59_999))).toBe('sealed-1');
    expect(previousSecretAt(rotated, new Date(NOW.getTime() + 60_000))).toBeUndefined();
  });

  test('when rotated with overlap 0, then only the new secret signs at once', () => {
    const rotated = rotatedWebhook(aWebhook(), 'sealed-2', 0, NOW);

    expect(previousSecretAt(rotated, NOW)).toBeUndefined();
  });

  test('when rotated again during an overlap, then the oldest secret stops at once: never more than two signatures', () => {
    const twice = rotatedWebhook(rotatedWebhook(aWebhook(), 'sealed-2', 3_600, NOW), 'sealed-3', 3_600, NOW);

    expect(twice).toMatchObject({ sealedSecret: 'sealed-3', previousSealedSecret: 'sealed-2' });
  });
});

describe('hearsOf', () => {
  test('when re-enabled after an event, then the webhook does not hear of it; of a later one it does', () => {
    const webhook = { createdAt: '2026-11-01T00:00:00.000Z', activeSince: NOW.toISOString() };

    expect(hearsOf(webhook, '2026-11-21T07:59:59.999Z')).toBe(false);
    expect(hearsOf(webhook, NOW.toISOString())).toBe(true);
    expect(hearsOf({ createdAt: '2026-11-01T00:00:00.000Z' }, '2026-11-02T00:00:00.000Z')).toBe(true);
  });
});

describe('a webhook disabled for its key (decision 50)', () => {
  const byCurrentKey = { keyDigest: 'b'.repeat(64), keyOwner: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA' };
  const keyEnded = aWebhook({
    status: 'disabled',
    disabledAt: '2026-11-20T00:00:00.000Z',
    disabledReason: 'key_ended',
    keyDigest: 'a'.repeat(64),
  });

  test('when it is re-enabled without its URL, then the change is refused with why; with its URL, or one disabled after failures, it is not', () => {
    expect(reenableRefusal(keyEnded, { enabled: true })).toMatch(/^is required to re-enable this webhook \(disabledReason key_ended/);
    expect(reenableRefusal({ ...keyEnded, disabledReason: 'key_leaked' }, { enabled: true })).toMatch(/reported leaked/);
    expect(reenableRefusal(keyEnded, { enabled: true, url: 'https://hooks.example.com/b' })).toBeUndefined();
    expect(reenableRefusal(keyEnded, { events: ['grade.changed'] })).toBeUndefined();
    expect(reenableRefusal(aWebhook({ status: 'disabled', disabledReason: 'delivery_failures' }), { enabled: true })).toBeUndefined();
  });

  test('when its URL is set again with enabled true, then it is active, its reason gone, and it answers to the key that set it', () => {
    const changed = changedWebhook(keyEnded, { enabled: true, url: 'https://hooks.example.com/b' }, NOW, byCurrentKey);

    expect(changed).toMatchObject({
      status: 'active',
      disabledAt: null,
      disabledReason: null,
      activeSince: NOW.toISOString(),
      url: 'https://hooks.example.com/b',
      ...byCurrentKey,
    });
    expect(disabledReasonOf(changed)).toBeNull();
  });

  test('when only other fields change, then the key it answers to stays', () => {
    expect(changedWebhook(keyEnded, { events: ['grade.changed'] }, NOW, byCurrentKey).keyDigest).toBe('a'.repeat(64));
  });

  test('when a disabled record has no reason (kept before reasons were), then it reads as disabled after failures; an active one has none', () => {
    expect(disabledReasonOf(aWebhook({ status: 'disabled' }))).toBe('delivery_failures');
    expect(disabledReasonOf(keyEnded)).toBe('key_ended');
    expect(disabledReasonOf(aWebhook({ status: 'paused' }))).toBeNull();
  });
});
