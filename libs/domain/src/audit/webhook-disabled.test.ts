import { webhookChangedSchema } from '@rsd/contracts';
import { auditRecordOfWebhookChange, webhookDisabledForFailures } from './audit-trail';

const stamp = { id: '7d3c2a1e-0000-4000-8000-000000000001', time: new Date('2026-12-02T10:00:00.000Z') };
const GRANT = 'rs_AAAAAAAAAAAAAAAAAAAAAAAA';
const system = { type: 'system', id: 'delivery-failures', via: null };

describe('webhookDisabledForFailures (decision 45 in decision 54’s trail)', () => {
  test("when a grant's webhook is disabled after failures, then the change is webhook.disabled by the system on the grant, on no request", () => {
    const change = webhookDisabledForFailures({ id: 'wh_AAAAAAAAAAAAAAAA1', ownerKey: GRANT, organizationId: 'acme' }, stamp);

    expect(webhookChangedSchema.parse(change)).toEqual(change);
    expect(auditRecordOfWebhookChange(change!)).toEqual({
      eventId: stamp.id,
      organizationId: 'acme',
      at: stamp.time.toISOString(),
      action: 'webhook.disabled',
      actor: system,
      requestId: null,
      address: null,
      clientId: GRANT,
    });
  });

  test("when the organization's alert subscription is disabled, then the change names no grant", () => {
    const change = webhookDisabledForFailures({ id: 'wh_AAAAAAAAAAAAAAAA2', ownerKey: 'organization:acme', organizationId: 'acme' }, stamp);

    expect(change?.data).toMatchObject({
      organizationId: 'acme',
      clientId: null,
      webhookId: 'wh_AAAAAAAAAAAAAAAA2',
      audit: { action: 'webhook.disabled', actor: system },
    });
  });

  test("when a recipient account's webhook is disabled, then there is no change to record: it is in no organization's trail", () => {
    expect(
      webhookDisabledForFailures({ id: 'wh_AAAAAAAAAAAAAAAA3', ownerKey: 'account:rcp_1', organizationId: '' }, stamp),
    ).toBeUndefined();
  });
});
