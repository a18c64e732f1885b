import type { PeriodicJob } from '@rsd/platform';
import { anAuditRecord, aStoredAuthorization, eventually } from '@rsd/testkit';
import { anAccessRecord, NOW, startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';
import { startRetentions } from './retentions';

const DAY = 86_400_000;
const ago = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();
const seen = (address: string, days: number) => ({ address, seenAt: ago(days) });

describe('decisions 21 and 56: what the credentials service keeps for a time', () => {
  let h: CredentialsHarness;
  let retentions: PeriodicJob | undefined;

  beforeEach(async () => {
    h = await startCredentials();
  });
  afterEach(async () => {
    await retentions?.stop();
    await h.close();
  });

  test('when the retentions run on the clock, then each store loses what is older than its days, at start and again once the clock has moved', async () => {
    const grant = aStoredAuthorization({
      organizationId: 'acme',
      activity: {
        firstUsedAt: ago(120),
        addresses: [seen('198.51.100.2', 89), seen('198.51.100.1', 91)],
        failures: [],
        failuresAlertedAt: null,
        expiryNotices: [],
      },
      alerts: [
        { id: 'alr_BBBBBBBBBBBBBBBB', type: 'authorization.new_address', at: ago(89), address: '198.51.100.2' },
        { id: 'alr_AAAAAAAAAAAAAAAA', type: 'authorization.first_use', at: ago(120), address: '198.51.100.1' },
      ],
    });
    await h.store.create(grant, []);
    const audit = (days: number) => anAuditRecord('acme', 0, { at: ago(days), clientId: grant.clientId });
    const [auditKept, auditLater] = [audit(300), audit(399)];
    await h.auditLog.add([audit(401), auditLater, auditKept]);
    const accessLater = anAccessRecord(grant.clientId, 89 * DAY);
    await h.accessLog.add([anAccessRecord(grant.clientId, 91 * DAY), accessLater]);
    const kept = async () => ({
      grant: await h.store.findByClientId(grant.clientId),
      audit: await h.auditLog.page({ organizationId: 'acme' }, { limit: 10 }),
      access: await h.accessLog.page(grant.clientId, { limit: 10 }),
    });

    retentions = startRetentions({
      config: { ACCESS_LOG_RETENTION_DAYS: 90, AUDIT_RETENTION_DAYS: 400, ALERT_ADDRESS_RETENTION_DAYS: 90 },
      store: h.store,
      relay: h.relay,
      accessLog: h.accessLog,
      auditLog: h.auditLog,
      clock: h.clock,
      log: h.log,
      intervalMs: 20,
    });

    await eventually(async () =>
      expect(await kept()).toEqual({
        grant: {
          ...grant,
          revision: grant.revision + 1,
          activity: { ...grant.activity, addresses: [seen('198.51.100.2', 89)] },
          alerts: [grant.alerts![0], { id: 'alr_AAAAAAAAAAAAAAAA', type: 'authorization.first_use', at: ago(120) }],
        },
        audit: [auditKept, auditLater],
        access: [accessLater],
      }),
    );
    h.clock.set(new Date(NOW.getTime() + 2 * DAY));
    await eventually(async () =>
      expect(await kept()).toEqual({
        grant: {
          ...grant,
          revision: grant.revision + 2,
          activity: { ...grant.activity, addresses: [] },
          alerts: grant.alerts!.map(({ address: _address, ...alert }) => alert),
        },
        audit: [auditKept],
        access: [],
      }),
    );
  });
});
