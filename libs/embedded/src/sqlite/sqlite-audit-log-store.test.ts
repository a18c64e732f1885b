import { fdatasync } from 'node:fs';
import { anAuditRecord, describeAuditLogStoreContract } from '@rsd/testkit';
import { aTempDatabasePerTest, onATempDatabase, queryPlan } from '../testing/temp-database';
import { auditPageQuery, openSqliteAuditLogStore } from './sqlite-audit-log-store';

// The syncs the database makes, counted (node:fs's own exports cannot be spied on).
jest.mock('node:fs', () => {
  const actual = jest.requireActual<typeof import('node:fs')>('node:fs');
  return { ...actual, fdatasync: jest.fn(actual.fdatasync) };
});

describeAuditLogStoreContract('SQLite', () => onATempDatabase('audit-log', (file) => openSqliteAuditLogStore({ file })));

describe('SQLite audit log store', () => {
  const temp = aTempDatabasePerTest('audit-log');

  it('when a page after a position is read, with or without filters, then it is one range of the index, never a scan from its top', async () => {
    const store = openSqliteAuditLogStore({ file: temp.file });
    const after = { at: '2026-11-23T12:00:00.000Z', eventId: 'e' };
    for (const filter of [{}, { actor: 'person', action: 'authorization.revoked', from: '2026-11-01T00:00:00.000Z' }]) {
      const plan = queryPlan(temp.file, auditPageQuery({ organizationId: 'acme', ...filter }, after).sql);

      expect(plan.join(' | ')).toMatch(
        /USING INDEX audit_log_by_organization \(organization_id=\? AND (at>\? AND )?\(at,event_id\)<\(\?,\?\)\)/,
      );
      expect(plan.join(' | ')).not.toContain('TEMP B-TREE');
    }
    await store.close();
  });

  it('when entries are added, then they are committed without a sync of their own (the log gives them again after a power cut), and a purge waits for one', async () => {
    const store = openSqliteAuditLogStore({ file: temp.file });
    const syncs = jest.mocked(fdatasync);
    syncs.mockClear();
    try {
      await store.add([anAuditRecord('acme', 1_000)]);
      await new Promise((resolve) => setImmediate(resolve));

      expect(await store.page({ organizationId: 'acme' }, { limit: 10 })).toHaveLength(1);
      expect(syncs).not.toHaveBeenCalled();

      await store.purgeOrganization('acme');
      expect(syncs).toHaveBeenCalledTimes(1);
    } finally {
      syncs.mockClear();
      await store.close();
    }
  });
});
