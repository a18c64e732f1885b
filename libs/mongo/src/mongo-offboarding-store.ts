import type { Db } from 'mongodb';
import type { PurgingService } from '@rsd/contracts';
import { offboardingKept, withPurge, type OffboardingRecord } from '@rsd/domain';
import type { OffboardingStore } from '@rsd/ports';
import { isDuplicateKeyError } from './duplicate-key';
import { reportingOutages } from './outages';

export const OFFBOARDINGS_COLLECTION = 'offboardings';

/** The offboarding's start (`_id` the organization) or one service's purge of it (`_id` `<organization>/<service>`). */
type OffboardingDocument =
  | { _id: string; kind: 'start'; organizationId: string; startedAt: string }
  | { _id: string; kind: 'purge'; organizationId: string; service: PurgingService; at: string };

/**
 * Decision 56's offboarding records on MongoDB (or FerretDB), in the credentials database. Every write
 * is an insert under a unique `_id` (the start, then one document per service's purge), never a
 * conditional update, which FerretDB applies as a read and a rewrite: purges told at once by two
 * services cannot overwrite each other. The record is folded from them (the domain's `withPurge`).
 */
export async function openMongoOffboardingStore(db: Db): Promise<OffboardingStore> {
  const documents = db.collection<OffboardingDocument>(OFFBOARDINGS_COLLECTION);
  await documents.createIndex({ organizationId: 1 });

  async function recordOf(organizationId: string): Promise<OffboardingRecord | undefined> {
    const found = await documents.find({ organizationId }).toArray();
    const start = found.find((document) => document.kind === 'start');
    if (!start) return undefined;
    let record: OffboardingRecord = { organizationId, startedAt: start.startedAt, purgedBy: {}, doneAt: null, expiresAt: null };
    const purges = found.flatMap((document) => (document.kind === 'purge' ? [document] : [])).sort((a, b) => (a.at < b.at ? -1 : 1));
    for (const purge of purges) record = withPurge(record, purge.service, new Date(purge.at));
    return record;
  }

  async function kept(organizationId: string, now: Date): Promise<OffboardingRecord | undefined> {
    const record = await recordOf(organizationId);
    if (!record || offboardingKept(record, now)) return record;
    await documents.deleteMany({ organizationId });
    return undefined;
  }

  const insertOnce = async (document: OffboardingDocument): Promise<boolean> => {
    try {
      await documents.insertOne(document);
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  };

  return reportingOutages<OffboardingStore>({
    find: kept,
    async start(record, now) {
      const existing = await kept(record.organizationId, now);
      if (existing) return existing;
      const { organizationId, startedAt } = record;
      if (await insertOnce({ _id: organizationId, kind: 'start', organizationId, startedAt })) return record;
      // Another replica started it at the same moment: its record is the one.
      return (await recordOf(organizationId)) ?? record;
    },
    async recordPurge(organizationId, service, at) {
      if (!(await documents.findOne({ _id: organizationId }))) return undefined;
      await insertOnce({ _id: `${organizationId}/${service}`, kind: 'purge', organizationId, service, at: at.toISOString() });
      return recordOf(organizationId);
    },
    close: () => Promise.resolve(),
  });
}
