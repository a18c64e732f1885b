import { offboardingKept, withPurge, type OffboardingRecord } from '@rsd/domain';
import type { OffboardingStore } from '@rsd/ports';
import { recordOf } from './database';
import { openStoreDatabase } from './store-database';

/**
 * Decision 56's offboarding records in the embedded database: a row per organization, the record as
 * JSON. One process writes it, in one transaction per change, so a purge recorded is read and
 * rewritten in one step; an expired row is replaced by a new offboarding, and deleted when read.
 */
export function openSqliteOffboardingStore(options: { file: string }): OffboardingStore {
  const { statement, read, write, close } = openStoreDatabase(options.file, 'the offboarding store', (db) =>
    db.exec(`CREATE TABLE IF NOT EXISTS offboardings (
        organization_id TEXT PRIMARY KEY,
        record TEXT NOT NULL
      ) WITHOUT ROWID`),
  );
  const stored = (organizationId: string): OffboardingRecord | undefined => {
    const row = statement('SELECT record FROM offboardings WHERE organization_id = ?').get(organizationId);
    return recordOf<OffboardingRecord>(row);
  };
  const keep = (record: OffboardingRecord) =>
    statement(
      `INSERT INTO offboardings (organization_id, record) VALUES (?, ?)
       ON CONFLICT (organization_id) DO UPDATE SET record = excluded.record`,
    ).run(record.organizationId, JSON.stringify(record));
  return {
    find(organizationId, now) {
      return read(() => {
        const record = stored(organizationId);
        return record && offboardingKept(record, now) ? record : undefined;
      });
    },
    start(record, now) {
      return write(() => {
        const kept = stored(record.organizationId);
        if (kept && offboardingKept(kept, now)) return kept;
        keep(record);
        return record;
      });
    },
    recordPurge(organizationId, service, at) {
      return write(() => {
        const kept = stored(organizationId);
        if (!kept) return undefined;
        const changed = withPurge(kept, service, at);
        if (changed !== kept) keep(changed);
        return changed;
      });
    },
    close,
  };
}
