import type { PurgingService } from '@rsd/contracts';
import type { OffboardingRecord } from '@rsd/domain';

/**
 * Decision 56: the records of organizations' offboardings, kept by the credentials service beside its
 * authorizations (SQLite in the embedded database, MongoDB in the credentials database). A record is
 * answered until its `expiresAt` (30 days after it was done), then forgotten.
 */
export interface OffboardingStore {
  /** The organization's record, unless it has none or it expired at or before `now`. */
  find(organizationId: string, now: Date): Promise<OffboardingRecord | undefined>;
  /** Keeps `record` unless the organization has a record not expired at `now`; resolves with the record kept. */
  start(record: OffboardingRecord, now: Date): Promise<OffboardingRecord>;
  /**
   * Records that `service` purged the organization at `at` (the domain's `withPurge`), in one step against
   * concurrent purges; undefined when the organization has no record. Told again, it changes nothing.
   */
  recordPurge(organizationId: string, service: PurgingService, at: Date): Promise<OffboardingRecord | undefined>;
  close(): Promise<void>;
}
