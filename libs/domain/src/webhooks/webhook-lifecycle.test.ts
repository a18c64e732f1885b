import { changedWebhook, hearsOf, previousSecretAt, rotatedWebhook, type WebhookState } from './webhook-lifecycle';

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
