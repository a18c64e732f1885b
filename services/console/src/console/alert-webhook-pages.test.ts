import type { OrganizationAlertEvent, Webhook, WebhookDisabledReason } from '@resilience-score/client';
import { alertWebhookPage, alertWebhooksPage } from './alert-webhook-pages';

const viewer = { displayName: 'Ada', organizationId: 'acme', csrfToken: 'csrf' };

function aWebhook(status: Webhook['status'], disabledReason: WebhookDisabledReason | null | undefined): Webhook<OrganizationAlertEvent> {
  return {
    id: 'wh_1234567890abcdef',
    url: 'https://hooks.example.com/alerts',
    events: ['authorization.key_leaked'],
    status,
    conditions: {},
    createdAt: '2026-12-01T00:00:00.000Z',
    ...(disabledReason === undefined ? {} : { disabledReason }),
  };
}

describe('the alert webhook pages say why a webhook is disabled', () => {
  test.each([
    ['delivery_failures', 'Disabled: deliveries failed', 'Disabled after a day of failed deliveries'],
    ['key_ended', 'Disabled: its key ended', 'cut off by a rotation with no overlap. Set its address again'],
    ['key_leaked', 'Disabled: its key leaked', 'reported leaked. Set its address again'],
  ] as const)('when the notifier disabled it for %s, then the list and its page say so and what brings it back', (reason, badge, why) => {
    const webhook = aWebhook('disabled', reason);
    expect(String(alertWebhooksPage(viewer, [webhook]))).toContain(badge);
    const page = String(alertWebhookPage(viewer, webhook, []));
    expect(page).toContain(badge);
    expect(page).toContain(why);
  });

  test('when a notifier older than the reasons disabled it (no disabledReason), then it reads as failed deliveries', () => {
    expect(String(alertWebhookPage(viewer, aWebhook('disabled', undefined), []))).toContain('Disabled after a day of failed deliveries');
  });

  test('when it is active, then no reason shows', () => {
    const page = String(alertWebhookPage(viewer, aWebhook('active', null), []));
    expect(page).toContain('>Active<');
    expect(page).not.toContain('Disabled');
  });
});
