import { MongoBulkWriteError, type Db, type Filter } from 'mongodb';
import type { AuditRecord } from '@rsd/contracts';
import type { AuditFilter, AuditLogStore } from '@rsd/ports';
import { reportingOutages } from './outages';

export const AUDIT_LOG_COLLECTION = 'audit_log';

/** An entry under its event's id, so an event the projection delivers again is kept once. */
interface AuditDocument {
  _id: string;
  organizationId: string;
  at: string;
  action: string;
  actorType: string;
  actorId: string;
  clientId: string | null;
  record: AuditRecord;
}

/**
 * Decision 54's audit view on MongoDB (or FerretDB), in the credentials database. `at` is the entry's
 * UTC ISO string, whose order is its time's, as the SQLite store keeps it; pages follow the
 * organization's index newest first.
 */
export async function openMongoAuditLogStore(db: Db): Promise<AuditLogStore> {
  const entries = db.collection<AuditDocument>(AUDIT_LOG_COLLECTION);
  await entries.createIndexes([{ key: { organizationId: 1, at: -1, _id: -1 } }]);
  // One index per command (FerretDB 1.24 drops the connection when one names several that exist): retention's deletes by time.
  await entries.createIndexes([{ key: { at: 1 } }]);
  return reportingOutages({
    async add(records: readonly AuditRecord[]) {
      if (records.length === 0) return;
      try {
        await entries.insertMany(records.map(documentOf), { ordered: false });
      } catch (error) {
        // Entries delivered before are there already; anything else is a real failure.
        if (!(error instanceof MongoBulkWriteError) || ![error.writeErrors].flat().every((failure) => failure.code === 11000)) throw error;
      }
    },
    async page(filter: AuditFilter, { limit, after }: { limit: number; after?: { at: string; eventId: string } }) {
      const query: Filter<AuditDocument> = { ...filterOf(filter) };
      if (after) query.$or = [{ at: { $lt: after.at } }, { at: after.at, _id: { $lt: after.eventId } }];
      const found = await entries.find(query).sort({ at: -1, _id: -1 }).limit(limit).toArray();
      return found.map((document) => document.record);
    },
    async purgeOrganization(organizationId: string) {
      await entries.deleteMany({ organizationId });
    },
    async eraseAddresses(organizationId: string, clientId: string) {
      // Every matching entry gets the same value: applied twice, or racing, it ends the same.
      await entries.updateMany({ organizationId, clientId }, { $set: { 'record.address': null } });
    },
    async prune(before: Date) {
      // `at` is a UTC ISO string of fixed precision, whose order is its time's.
      await entries.deleteMany({ at: { $lt: before.toISOString() } });
    },
    close: () => Promise.resolve(),
  });
}

function documentOf(record: AuditRecord): AuditDocument {
  return {
    _id: record.eventId,
    organizationId: record.organizationId,
    at: record.at,
    action: record.action,
    actorType: record.actor.type,
    actorId: record.actor.id,
    clientId: record.clientId,
    record,
  };
}

function filterOf(filter: AuditFilter): Filter<AuditDocument> {
  const at = { ...(filter.from ? { $gte: filter.from } : {}), ...(filter.to ? { $lt: filter.to } : {}) };
  return {
    organizationId: filter.organizationId,
    ...(filter.from || filter.to ? { at } : {}),
    ...(filter.action ? { action: filter.action } : {}),
    ...(filter.clientId ? { clientId: filter.clientId } : {}),
    // An actor's id, or one of the types; inside `$and`, as the cursor's `$or` is at the top.
    ...(filter.actor ? { $and: [{ $or: [{ actorId: filter.actor }, { actorType: filter.actor }] }] } : {}),
  };
}
