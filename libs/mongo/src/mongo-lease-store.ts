import type { Db } from 'mongodb';
import type { LeaseEpoch } from '@rsd/domain';
import type { LeaseStore } from '@rsd/ports';
import { isDuplicateKeyError } from './duplicate-key';
import { reportingOutages } from './outages';

export const LEASES_COLLECTION = 'leases';

/** A replica that has not said it is alive for this long is forgotten (its document removed). */
const MEMBER_FORGOTTEN_MS = 3_600_000;

/**
 * An epoch of a lease (`_id` `<group>/<name>#<fence>`: the unique key that lets one replica alone
 * write it) or a replica saying it is alive (`<group>/member/<member>`).
 */
interface LeaseDocument {
  _id: string;
  group: string;
  kind: 'epoch' | 'member';
  /** The lease's name, or the member's. */
  name: string;
  fence: number;
  owner: string;
  /** ISO instant with milliseconds: string order is time order. */
  until: string;
  released?: boolean;
}

/**
 * Decision 52's leases on MongoDB (or FerretDB), in the service's database. Taking a lease inserts its
 * next epoch under a unique `_id`, which MongoDB and FerretDB (a PostgreSQL primary key) both refuse to
 * a second writer; every other write touches only the writer's own documents, so none needs a
 * conditional update to be atomic (FerretDB 1.24 applies one as a read and a rewrite).
 */
export async function openMongoLeaseStore(db: Db): Promise<LeaseStore> {
  const leases = db.collection<LeaseDocument>(LEASES_COLLECTION);
  await leases.createIndex({ group: 1 });
  const epochId = (group: string, name: string, fence: number) => `${group}/${name}#${fence}`;

  return reportingOutages<LeaseStore>({
    async read(group, now) {
      const documents = await leases.find({ group }).toArray();
      const latest = new Map<string, LeaseEpoch>();
      const members: string[] = [];
      const forgotten: string[] = [];
      const at = now.toISOString();
      const forgottenBefore = new Date(now.getTime() - MEMBER_FORGOTTEN_MS).toISOString();
      for (const document of documents) {
        if (document.kind === 'member') {
          if (document.until > at) members.push(document.name);
          else if (document.until < forgottenBefore) forgotten.push(document._id);
          continue;
        }
        const newest = latest.get(document.name);
        if (!newest || newest.fence < document.fence) latest.set(document.name, epochOf(document));
      }
      if (forgotten.length > 0) await leases.deleteMany({ _id: { $in: forgotten } });
      return { latest, members };
    },

    async claim(group, epoch) {
      try {
        await leases.insertOne({ _id: epochId(group, epoch.name, epoch.fence), group, kind: 'epoch', ...epoch });
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
      // The epochs before it are history: no holder of theirs can renew them any more.
      await leases.deleteMany({ group, kind: 'epoch', name: epoch.name, fence: { $lt: epoch.fence } });
      return true;
    },

    async renew(group, owner, epochs, until, released) {
      if (epochs.length === 0) return;
      const ids = epochs.map(({ name, fence }) => epochId(group, name, fence));
      await leases.updateMany({ _id: { $in: ids }, owner }, { $set: { until, ...(released ? { released: true } : {}) } });
    },

    async heartbeat(group, member, until) {
      await leases.updateOne(
        { _id: `${group}/member/${member}` },
        { $set: { group, kind: 'member', name: member, fence: 0, owner: member, until } },
        { upsert: true },
      );
    },

    close: () => Promise.resolve(),
  });
}

function epochOf(document: LeaseDocument): LeaseEpoch {
  const { name, fence, owner, until, released } = document;
  return { name, fence, owner, until, ...(released ? { released } : {}) };
}
