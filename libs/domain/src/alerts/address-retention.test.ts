import { aStoredAuthorization } from '@rsd/testkit';
import { keepsAlertAddressesBefore, withoutAlertAddressesBefore } from './address-retention';

const before = new Date('2026-09-01T00:00:00.000Z');
const older = '2026-08-31T23:59:59.999Z';
const newer = '2026-09-01T00:00:00.000Z';

describe('decision 56: addresses kept for alerts, retained for ALERT_ADDRESS_RETENTION_DAYS', () => {
  test('when some addresses are older than the cut-off, then those seen addresses go, those alerts lose their address and the rest stays', () => {
    const grant = aStoredAuthorization({
      activity: {
        firstUsedAt: older,
        addresses: [
          { address: '198.51.100.2', seenAt: newer },
          { address: '198.51.100.1', seenAt: older },
        ],
        failures: [],
        failuresAlertedAt: null,
        expiryNotices: [],
      },
      alerts: [
        { id: 'alr_BBBBBBBBBBBBBBBB', type: 'authorization.new_address', at: newer, address: '198.51.100.2' },
        { id: 'alr_AAAAAAAAAAAAAAAA', type: 'authorization.first_use', at: older, address: '198.51.100.1' },
        { id: 'alr_CCCCCCCCCCCCCCCC', type: 'authorization.auth_failures', at: older, failures: 20 },
      ],
    });

    const kept = withoutAlertAddressesBefore(grant, before);

    expect(keepsAlertAddressesBefore(grant, before)).toBe(true);
    expect(JSON.stringify(kept)).not.toContain('198.51.100.1');
    expect(kept).toEqual({
      ...grant,
      revision: grant.revision + 1,
      activity: { ...grant.activity, addresses: [{ address: '198.51.100.2', seenAt: newer }] },
      alerts: [grant.alerts![0], { id: 'alr_AAAAAAAAAAAAAAAA', type: 'authorization.first_use', at: older }, grant.alerts![2]],
    });
  });

  test('when nothing kept is older than the cut-off (or nothing is kept), then there is nothing to write', () => {
    const recent = aStoredAuthorization({
      activity: {
        firstUsedAt: newer,
        addresses: [{ address: '198.51.100.2', seenAt: newer }],
        failures: [],
        failuresAlertedAt: null,
        expiryNotices: [],
      },
      alerts: [{ id: 'alr_CCCCCCCCCCCCCCCC', type: 'authorization.auth_failures', at: older, failures: 20 }],
    });

    expect(withoutAlertAddressesBefore(recent, before)).toBeUndefined();
    expect(keepsAlertAddressesBefore(recent, before)).toBe(false);
    expect(withoutAlertAddressesBefore(aStoredAuthorization(), before)).toBeUndefined();
  });
});
