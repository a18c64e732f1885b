import { createWebhookRequestSchema, webhookDeliverySchema, webhookPayloadSchema } from './webhooks';

describe('createWebhookRequestSchema (decision 26)', () => {
  test('when the body has a URL and distinct known events, then it is accepted as given', () => {
    const body = { url: 'https://hooks.example.com/rs', events: ['grade.changed', 'authorization.ended'] };

    expect(createWebhookRequestSchema.parse(body)).toEqual(body);
  });

  test.each([
    ['no events', { url: 'https://hooks.example.com/', events: [] }, 'events'],
    ['a repeated event', { url: 'https://hooks.example.com/', events: ['score.updated', 'score.updated'] }, 'events'],
    ['an unknown event', { url: 'https://hooks.example.com/', events: ['score.deleted'] }, 'events.0'],
    ['an empty URL', { url: '', events: ['score.updated'] }, 'url'],
    ['a URL of 2049 characters', { url: `https://h.example/${'a'.repeat(2049 - 18)}`, events: ['score.updated'] }, 'url'],
    ['an unknown field', { url: 'https://hooks.example.com/', events: ['score.updated'], secret: 'mine' }, ''],
  ])('when the body has %s, then it is refused at that path', (_case, body, path) => {
    const result = createWebhookRequestSchema.safeParse(body);

    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toContain(path);
  });

  test('when the URL is exactly 2048 characters, then the schema accepts it (decision 28 checks the rest)', () => {
    const url = `https://h.example/${'a'.repeat(2048 - 18)}`;

    expect(createWebhookRequestSchema.safeParse({ url, events: ['score.updated'] }).success).toBe(true);
  });
});

describe('webhookPayloadSchema (decision 27)', () => {
  const clientId = 'rs_AAAAAAAAAAAAAAAAAAAAAAAA';
  const timestamp = '2026-11-21T08:00:00.000Z';

  test('when each type carries its data, then it parses; a field added later is tolerated by a recipient', () => {
    const payloads = [
      { type: 'score.updated', timestamp, data: { clientId, scoreDate: '2026-11-21', score: 58, grade: 'Strengthen' } },
      { type: 'grade.changed', timestamp, data: { clientId, scoreDate: '2026-11-21', from: 'Optimize', to: 'Strengthen' } },
      { type: 'authorization.ended', timestamp, data: { clientId, reason: 'expired', endedAt: timestamp } },
    ];

    for (const payload of payloads) expect(webhookPayloadSchema.parse(payload)).toEqual(payload);
    expect(webhookPayloadSchema.safeParse({ ...payloads[0], version: 2 }).success).toBe(true);
  });

  test('when a type carries another type’s data, then it is refused', () => {
    expect(
      webhookPayloadSchema.safeParse({
        type: 'grade.changed',
        timestamp,
        data: { clientId, scoreDate: '2026-11-21', score: 5, grade: 'Improve' },
      }).success,
    ).toBe(false);
  });
});

describe('webhookDeliverySchema', () => {
  /** An attempt waiting to be sent: what every delivery has, with its nulls. */
  const pending = {
    messageId: 'msg_2KWPBgLlAfxdpx2AI54pPJ85',
    eventType: 'score.updated',
    attempt: 2,
    status: 'pending',
    responseCode: null,
    failure: null,
    scheduledAt: '2026-11-21T08:00:05.000Z',
    attemptedAt: null,
  };

  test('when a pending attempt is listed, then it parses with its nulls; a messageId with a "." is refused', () => {
    expect(webhookDeliverySchema.parse(pending)).toEqual(pending);
    expect(webhookDeliverySchema.safeParse({ ...pending, messageId: 'msg_2KWPBgLl.Afxdpx2AI54pPJ85' }).success).toBe(false);
  });

  test('when a skipped delivery is listed, then it parses with why it was skipped; a reason it does not know is refused', () => {
    const skipped = { ...pending, attempt: 1, status: 'skipped', skipped: 'address_not_allowed', attemptedAt: '2026-11-21T08:00:05.012Z' };

    expect(webhookDeliverySchema.parse(skipped)).toEqual(skipped);
    expect(webhookDeliverySchema.safeParse({ ...skipped, skipped: 'too_slow' }).success).toBe(false);
  });
});
