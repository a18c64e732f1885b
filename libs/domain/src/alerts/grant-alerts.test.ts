import type { AccessRecord } from '@rsd/contracts';
import { anAuthorizationRecord } from '@rsd/testkit';
import type { StoredAuthorization } from '../authorizations/authorization-record';
import { ADDRESSES_KEPT, decideAlerts, expiryNoticeDue, nextExpiryNoticeAt, observeAccess, organizationAlerts } from './grant-alerts';
import type { GrantActivity } from './alert-state';

const GRANT = `rs_${'G'.repeat(24)}`;
const RELEASED = `rs_${'R'.repeat(24)}`;
const REVOKED = `rs_${'V'.repeat(24)}`;

const record = (fields: Partial<StoredAuthorization> = {}): StoredAuthorization =>
  anAuthorizationRecord({ clientId: GRANT, createdAt: '2026-11-01T00:00:00.000Z', ...fields });

let ids = 0;
const access = (at: string, status: number, clientAddress: string | null = '198.51.100.1', code: string | null = null): AccessRecord => ({
  id: `r-${(ids += 1)}`,
  clientId: GRANT,
  at,
  resource: 'score',
  status,
  code,
  clientAddress,
  requestId: 'req',
});
const read = (at: string, address?: string) => access(at, 200, address ?? '198.51.100.1');
const failure = (at: string) => access(at, 401, '192.0.2.1', 'INVALID_API_KEY');
const NOW = new Date('2026-11-27T12:00:00.000Z');

/** Applies each batch in turn as the credentials service does, returning every alert's type. */
function run(batches: AccessRecord[][], start = record()): { types: string[]; last: StoredAuthorization } {
  let current = start;
  const types: string[] = [];
  for (const batch of batches) {
    const observed = observeAccess(current, batch, NOW);
    if (!observed) continue;
    current = decideAlerts(current, observed, () => `event-${(ids += 1)}`).record;
    types.push(...observed.alerts.map((alert) => alert.type));
  }
  return { types, last: current };
}

describe('a grant’s alerts from its reads (decision 44)', () => {
  test('when a grant is read for the first time, then first_use with the address, and that address is not also new', () => {
    const observed = observeAccess(record(), [read('2026-11-27T10:00:00.000Z'), read('2026-11-27T10:00:01.000Z')], NOW);
    expect(observed?.alerts).toEqual([{ type: 'authorization.first_use', at: '2026-11-27T10:00:00.000Z', address: '198.51.100.1' }]);
  });

  test('when the reads come from the addresses seen within 30 days, then nothing is written at all', () => {
    const { last } = run([[read('2026-11-27T10:00:00.000Z')]]);
    expect(observeAccess(last, [read('2026-11-27T10:30:00.000Z')], NOW)).toBeUndefined();
  });

  test('when an address is new, or last seen more than 30 days before, then new_address, once', () => {
    const { types } = run([
      [read('2026-10-01T10:00:00.000Z', '198.51.100.1')],
      [read('2026-10-20T10:00:00.000Z', '203.0.113.5'), read('2026-10-20T10:00:01.000Z', '203.0.113.5')],
      [read('2026-10-30T10:00:00.000Z', '198.51.100.1')],
      [read('2026-11-27T10:00:00.000Z', '198.51.100.1')],
      [read('2026-11-27T11:00:00.000Z', '203.0.113.5')],
    ]);
    // 203.0.113.5 is new on 20 October, and again on 27 November, 38 days after it was last seen.
    expect(types).toEqual(['authorization.first_use', 'authorization.new_address', 'authorization.new_address']);

    const later = run([[read('2026-09-01T00:00:00.000Z')], [read('2026-10-01T00:00:01.000Z')]]);
    expect(later.types).toEqual(['authorization.first_use', 'authorization.new_address']);
  });

  test('when a read has no address, or is refused, then only its first success counts, and no address is news', () => {
    const { types } = run([
      [read('2026-11-27T10:00:00.000Z', undefined), access('2026-11-27T10:00:01.000Z', 403, '203.0.113.9', 'ADDRESS_NOT_ALLOWED')],
    ]);
    expect(types).toEqual(['authorization.first_use']);
  });

  test('when 20 authentications fail within 5 minutes, then auth_failures once; the next 20 within the hour raise nothing; after it they do', () => {
    const at = (minute: number, second: number) =>
      new Date(Date.parse('2026-11-27T10:00:00.000Z') + minute * 60_000 + second * 1000).toISOString();
    const nineteen = Array.from({ length: 19 }, (_, index) => failure(at(0, index)));
    expect(run([nineteen]).types).toEqual([]);
    const { types, last } = run([nineteen, [failure(at(1, 0))], Array.from({ length: 20 }, (_, index) => failure(at(10, index)))]);
    expect(types).toEqual(['authorization.auth_failures']);
    expect(last.alerts?.[0]).toMatchObject({ type: 'authorization.auth_failures', failures: 20 });

    const again = run([Array.from({ length: 20 }, (_, index) => failure(at(61, index)))], last);
    expect(again.types).toEqual(['authorization.auth_failures']);
  });

  test('when the 20th failure is counted before earlier ones (another replica published them later), then auth_failures once all 20 are known', () => {
    const at = (second: number) => new Date(Date.parse('2026-11-27T10:00:00.000Z') + second * 1000).toISOString();
    const first17 = Array.from({ length: 17 }, (_, index) => failure(at(index)));
    const late = [failure(at(17)), failure(at(18))];

    const { types, last } = run([first17, [failure(at(30))], late]);

    expect(types).toEqual(['authorization.auth_failures']);
    expect(last.alerts?.[0]).toMatchObject({ type: 'authorization.auth_failures', at: at(30), failures: 20 });
  });

  test('when failures share a millisecond (two replicas answered at once), then each counts; a failure delivered again counts once', () => {
    const at = (second: number) => new Date(Date.parse('2026-11-27T10:00:00.000Z') + second * 1000).toISOString();
    // Ten pairs, each pair's two failures in the same millisecond.
    const pairs = Array.from({ length: 10 }, (_, index) => [failure(at(index)), failure(at(index))]).flat();
    const nineteen = pairs.slice(0, 19);

    expect(run([nineteen, nineteen]).types).toEqual([]);
    const { types, last } = run([nineteen, nineteen, [pairs[19]!]]);
    expect(types).toEqual(['authorization.auth_failures']);
    expect(last.alerts?.[0]).toMatchObject({ type: 'authorization.auth_failures', at: at(9), failures: 20 });
  });

  test('when the failures kept before ids were are plain times, then they still count toward the 20', () => {
    const at = (second: number) => new Date(Date.parse('2026-11-27T10:00:00.000Z') + second * 1000).toISOString();
    const kept: GrantActivity = {
      firstUsedAt: null,
      addresses: [],
      failures: Array.from({ length: 19 }, (_, index) => at(index)),
      failuresAlertedAt: null,
      expiryNotices: [],
    };

    const { types, last } = run([[failure(at(19))]], record({ activity: kept }));

    expect(types).toEqual(['authorization.auth_failures']);
    expect(last.alerts?.[0]).toMatchObject({ at: at(19), failures: 20 });
  });

  test('when 20 failures spread over more than 5 minutes, then no alert', () => {
    const spread = Array.from({ length: 20 }, (_, index) =>
      failure(new Date(Date.parse('2026-11-27T10:00:00.000Z') + index * 20_000).toISOString()),
    );
    expect(run([spread]).types).toEqual([]);
  });

  test('when a batch comes again (a replay after a crash), then nothing more is raised', () => {
    const batch = [read('2026-11-27T10:00:00.000Z'), read('2026-11-27T10:05:00.000Z', '203.0.113.5')];
    const { types } = run([batch, batch]);
    expect(types).toEqual(['authorization.first_use', 'authorization.new_address']);
  });

  test('when the grant has ended, then its reads raise nothing', () => {
    expect(observeAccess(record({ revokedAt: '2026-11-26T00:00:00.000Z' }), [read('2026-11-27T10:00:00.000Z')], NOW)).toBeUndefined();
  });

  test('when a grant is read from more addresses than are kept, then the least recently seen are forgotten', () => {
    const batch = Array.from({ length: ADDRESSES_KEPT + 5 }, (_, index) =>
      read(
        new Date(Date.parse('2026-11-27T00:00:00.000Z') + index * 60_000).toISOString(),
        `10.0.${Math.floor(index / 250)}.${index % 250}`,
      ),
    );
    const activity = observeAccess(record(), batch, NOW)?.activity as GrantActivity;
    expect(activity.addresses).toHaveLength(ADDRESSES_KEPT);
    expect(activity.addresses.map(({ address }) => address)).not.toContain('10.0.0.0');
    expect(activity.addresses[0]).toEqual({ address: '10.0.0.54', seenAt: '2026-11-27T00:54:00.000Z' });
  });
});

describe('expiry notices (decision 44)', () => {
  const expiring = record({ expiresAt: '2026-12-10T00:00:00.000Z' });

  test('when 7 days are left, then one notice; when 1 day is left, then the second; never again', () => {
    expect(expiryNoticeDue(expiring, new Date('2026-12-02T23:59:59.999Z'))).toBeUndefined();
    const first = expiryNoticeDue(expiring, new Date('2026-12-03T00:00:00.000Z'));
    expect(first?.alert).toEqual({ type: 'authorization.expiring', at: '2026-12-03T00:00:00.000Z', expiresAt: '2026-12-10T00:00:00.000Z' });
    const after = { ...expiring, activity: first?.activity };
    expect(expiryNoticeDue(after, new Date('2026-12-08T00:00:00.000Z'))).toBeUndefined();
    expect(nextExpiryNoticeAt(after)).toBe('2026-12-09T00:00:00.000Z');
    const second = expiryNoticeDue(after, new Date('2026-12-09T00:00:00.000Z'));
    expect(second?.activity.expiryNotices).toEqual([7, 1]);
    expect(nextExpiryNoticeAt({ ...expiring, activity: second?.activity })).toBeNull();
  });

  test('when both marks have passed at the first check, then one notice, and both count as sent', () => {
    const late = expiryNoticeDue(expiring, new Date('2026-12-09T12:00:00.000Z'));
    expect(late?.activity.expiryNotices).toEqual([7, 1]);
  });

  test('when the grant has no expiry or has ended, then no notice and nothing to index', () => {
    expect(expiryNoticeDue(record(), NOW)).toBeUndefined();
    expect(nextExpiryNoticeAt(record())).toBeNull();
    expect(nextExpiryNoticeAt({ ...expiring, revokedAt: '2026-11-30T00:00:00.000Z' })).toBeNull();
  });
});

describe('an organization’s last alerts (decision 44)', () => {
  test('when grants have alerts and some were released or revoked for a leaked key, then all of them, newest first, at most the limit', () => {
    const one = run([[read('2026-11-27T10:00:00.000Z')]]).last;
    const released = record({ clientId: RELEASED, revokedAt: '2026-11-27T11:00:00.000Z', revocationReason: 'released_by_recipient' });
    const byOrganization = record({ clientId: REVOKED, revokedAt: '2026-11-27T11:30:00.000Z', revocationReason: 'organization' });
    const alerts = organizationAlerts([one, released, byOrganization]);
    expect(alerts.map((alert) => [alert.type, alert.clientId])).toEqual([
      ['authorization.released', RELEASED],
      ['authorization.first_use', GRANT],
    ]);
    expect(organizationAlerts([one, released], 1)).toHaveLength(1);
  });
});
