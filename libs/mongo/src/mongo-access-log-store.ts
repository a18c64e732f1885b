import { MongoBulkWriteError, type Db, type Filter } from 'mongodb';
import type { AccessRecord, AccessResource, CertificateRead } from '@rsd/contracts';
import {
  bucketStart,
  HOUR_MS,
  countsAsRefusal,
  countsAsUse,
  dailyFromHours,
  MINUTE_MS,
  NO_USAGE,
  USAGE_BUCKET_RETENTION_MS,
  usageBucketRanges,
  usageFrom,
  type RecordUsage,
  type UsageBucket,
  type UsageGrain,
} from '@rsd/domain';
import type { AccessLogStore } from '@rsd/ports';
import { ensureExpiry } from './expiry-index';
import { reportingOutages } from './outages';
import { createPerKeyQueue } from './per-key-queue';

export const ACCESS_LOG_COLLECTION = 'access_log';
export const ACCESS_USAGE_COLLECTION = 'access_usage';

/** An access record; `at` is a BSON date, which a TTL index needs. */
interface EntryDocument {
  _id: string;
  clientId: string;
  at: Date;
  requestId: string;
  resource: AccessResource;
  status: number;
  code: string | null;
  clientAddress: string | null;
  /** Decision 55: a certificate fetch's date and format; absent for other reads and in documents from before. */
  certificate?: CertificateRead;
}

/**
 * A minute's or an hour's successful reads and refusals of one Client ID, or (grain `last`) its last
 * successful read. A bucket written before refusals were counted has no `refusals`: 0.
 */
interface UsageDocument {
  _id: string;
  clientId: string;
  grain: UsageGrain | 'last';
  bucket?: Date;
  reads?: number;
  refusals?: number;
  lastUsedAt?: Date;
}

/** One upsert of a usage bucket: raised by (`$inc`) or to (`$max`) `update`. */
interface Raise {
  id: string;
  operator: '$inc' | '$max';
  update: Partial<UsageDocument>;
  onInsert: Partial<UsageDocument>;
}

export interface MongoAccessLogStoreOptions {
  retentionDays: number;
  /** Told once whether the server expires records itself (a TTL index) or leaves it to `prune`. */
  onExpiry?: (expiry: 'ttl-index' | 'prune') => void;
}

/**
 * The access log and usage counters on MongoDB (or FerretDB), in the credentials database.
 *
 * Records are inserted with their own id as `_id`, so a batch the projection delivers again is kept
 * once. Usage (successful reads, and refusals for decision 38's chart) is kept per minute and per hour
 * (usage.ts), in one `bulkWrite` per message: after an insert whose records were all new, each minute
 * and hour it touched is raised by what it added (`$inc`); after one that met records already there (a
 * replay, perhaps after a crash between the insert and the counts), each minute is counted again from
 * `access_log` and each hour summed from its minutes, written with `$max`. Counts only grow, so
 * duplicates, replays and crashes between the writes all end at the right number.
 *
 * `at` and the buckets are dates under TTL indexes (records after `retentionDays`, buckets after
 * 31 days). FerretDB 1.24 has no TTL indexes: there `prune` deletes by date.
 */
export async function openMongoAccessLogStore(db: Db, options: MongoAccessLogStoreOptions): Promise<AccessLogStore> {
  const entries = db.collection<EntryDocument>(ACCESS_LOG_COLLECTION);
  const usage = db.collection<UsageDocument>(ACCESS_USAGE_COLLECTION);
  await entries.createIndexes([{ key: { clientId: 1, at: -1, requestId: -1, _id: -1 } }]);
  await usage.createIndexes([{ key: { clientId: 1, grain: 1, bucket: 1 } }]);
  const entriesExpire = await ensureExpiry(entries, 'at', options.retentionDays * 86_400);
  await ensureExpiry(usage, 'bucket', USAGE_BUCKET_RETENTION_MS / 1000);
  options.onExpiry?.(entriesExpire ? 'ttl-index' : 'prune');

  /** Inserts the records and answers whether every one was new: a record delivered before is kept once, by its `_id`. */
  async function insertOnce(records: readonly AccessRecord[]): Promise<'all new' | 'some known'> {
    try {
      await entries.insertMany(records.map(documentOf), { ordered: false });
      return 'all new';
    } catch (error) {
      // Records delivered before are already there; anything else is a real failure.
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const failures = [error.writeErrors].flat();
      if (!failures.every((failure) => failure.code === 11000)) throw error;
      return 'some known';
    }
  }

  // FerretDB 1.24 applies `$max` and `$inc` as a read and then a rewrite of the document, so two raises
  // of one bucket at once (batches of two partitions) can end at the smaller value: a message's writes
  // wait for any earlier message's writes to a bucket they share. MongoDB's are atomic on their own,
  // and then the turns cost only their order.
  const raises = createPerKeyQueue();

  /**
   * Writes `raises` in one `bulkWrite` (unordered: one round trip for the whole message), after the
   * writes of earlier messages that touch any of the same buckets. Two upserts of a new bucket at once
   * (another process) make the loser's insert clash; the bucket exists then, and the writes that
   * clashed are sent once more.
   */
  async function write(raising: readonly Raise[]): Promise<void> {
    if (raising.length === 0) return;
    const ids = [...new Set(raising.map(({ id }) => id))].sort();
    // `updateMany` on an `_id`, which matches one document at most, as `updateOne` would: FerretDB 1.24
    // keeps the read of each single-document update open until its whole `update` command ends, one
    // pooled PostgreSQL connection each, so a command of more updates of existing documents than its
    // pool holds waits forever; a multi-document update reads to the end and lets its connection go.
    const operations = raising.map(({ id, operator, update, onInsert }) => ({
      updateMany: { filter: { _id: id }, update: { [operator]: update, $setOnInsert: onInsert }, upsert: true },
    }));
    await inTurnsOf(ids, async () => {
      try {
        await usage.bulkWrite(operations, { ordered: false });
      } catch (error) {
        if (!(error instanceof MongoBulkWriteError)) throw error;
        const failures = [error.writeErrors].flat();
        if (!failures.every((failure) => failure.code === 11000)) throw error;
        await usage.bulkWrite(
          failures.map((failure) => operations[failure.index]!),
          { ordered: false },
        );
      }
    });
  }

  /** Runs `task` once every earlier task holding any of `ids` is done, holding them all until it is. */
  function inTurnsOf(ids: readonly string[], task: () => Promise<void>): Promise<void> {
    const [first, ...rest] = ids;
    if (first === undefined) return task();
    return raises.run(first, () => inTurnsOf(rest, task));
  }

  /**
   * Brings the usage buckets `records` touched up to date: the successful reads (countsAsUse) and the
   * refusals (countsAsRefusal) per minute and per hour, and each credential's last use, in one
   * `bulkWrite`. When every record was new (`all new`, the usual case), each minute and each hour is
   * raised by what the message adds to it (`$inc`), whatever it already holds. When some were there
   * already (a message delivered again, perhaps after a crash between its insert and its counts, or
   * in the middle of its `bulkWrite`), each minute is counted again from `access_log` and raised to
   * that (`$max`), and each hour to the sum of its minutes (`$max`), which also repairs a count the
   * crash left short; that rare path reads before it writes. A recount reads the whole minute: with
   * the rate limit lifted (a benchmark, thousands of reads a minute for one credential) counting every
   * message again cost the database a scan per message.
   */
  async function count(records: readonly AccessRecord[], inserted: 'all new' | 'some known'): Promise<void> {
    const minutes = new Map<string, { clientId: string; start: number; reads: number; refusals: number }>();
    const lastUses = new Map<string, string>();
    for (const record of records) {
      const [read, refusal] = [countsAsUse(record), countsAsRefusal(record)];
      if (!read && !refusal) continue;
      const { clientId, at } = record;
      const start = bucketStart('minute', Date.parse(at));
      const key = `${clientId} ${start}`;
      const touched = minutes.get(key) ?? { clientId, start, reads: 0, refusals: 0 };
      minutes.set(key, { ...touched, reads: touched.reads + (read ? 1 : 0), refusals: touched.refusals + (refusal ? 1 : 0) });
      if (read && at > (lastUses.get(clientId) ?? '')) lastUses.set(clientId, at);
    }
    const hours = new Map<string, { clientId: string; start: number; reads: number; refusals: number }>();
    for (const { clientId, start, reads, refusals } of minutes.values()) {
      const hour = bucketStart('hour', start);
      const touched = hours.get(`${clientId} ${hour}`) ?? { clientId, start: hour, reads: 0, refusals: 0 };
      hours.set(`${clientId} ${hour}`, { ...touched, reads: touched.reads + reads, refusals: touched.refusals + refusals });
    }
    const lasts: Raise[] = [...lastUses].map(([clientId, at]) => ({
      id: `${clientId}|last`,
      operator: '$max',
      update: { lastUsedAt: new Date(at) },
      onInsert: { clientId, grain: 'last' },
    }));
    if (inserted === 'all new') {
      const raiseBy = (
        grain: UsageGrain,
        { clientId, start, reads, refusals }: { clientId: string; start: number; reads: number; refusals: number },
      ): Raise => ({
        id: bucketId(clientId, grain, start),
        operator: '$inc',
        update: { reads, refusals },
        onInsert: { clientId, grain, bucket: new Date(start) },
      });
      await write([
        ...[...minutes.values()].map((minute) => raiseBy('minute', minute)),
        ...[...hours.values()].map((hour) => raiseBy('hour', hour)),
        ...lasts,
      ]);
      return;
    }
    await write(await recountedMinutes([...minutes.values()]));
    await write([...(await summedHours([...hours.values()])), ...lasts]);
  }

  /** Each minute counted again from `access_log` (the replay path). */
  async function recountedMinutes(
    minutes: readonly { clientId: string; start: number; reads: number; refusals: number }[],
  ): Promise<Raise[]> {
    const raising: Raise[] = [];
    for (const { clientId, start, reads, refusals } of minutes) {
      const ofMinute = { clientId, at: { $gte: new Date(start), $lt: new Date(start + MINUTE_MS) } };
      // Decision 38's claims are listed, counted neither as reads nor as refusals.
      const counts: Pick<UsageDocument, 'reads' | 'refusals'> = {};
      if (reads > 0)
        counts.reads = await entries.countDocuments({ ...ofMinute, status: { $gte: 200, $lt: 400 }, resource: { $ne: 'claim' } });
      if (refusals > 0) counts.refusals = await entries.countDocuments({ ...ofMinute, status: { $gte: 400 }, resource: { $ne: 'claim' } });
      raising.push({
        id: bucketId(clientId, 'minute', start),
        operator: '$max',
        update: counts,
        onInsert: { clientId, grain: 'minute', bucket: new Date(start) },
      });
    }
    return raising;
  }

  /** Each hour as the sum of its minutes (the replay path, after the minutes are repaired). */
  async function summedHours(hours: readonly { clientId: string; start: number }[]): Promise<Raise[]> {
    const raising: Raise[] = [];
    for (const { clientId, start } of hours) {
      const ofHour = await usage
        .find(
          { clientId, grain: 'minute', bucket: { $gte: new Date(start), $lt: new Date(start + HOUR_MS) } },
          { projection: { reads: 1, refusals: 1 } },
        )
        .toArray();
      const reads = ofHour.reduce((sum, minute) => sum + (minute.reads ?? 0), 0);
      const refusals = ofHour.reduce((sum, minute) => sum + (minute.refusals ?? 0), 0);
      raising.push({
        id: bucketId(clientId, 'hour', start),
        operator: '$max',
        update: { reads, refusals },
        onInsert: { clientId, grain: 'hour', bucket: new Date(start) },
      });
    }
    return raising;
  }

  return reportingOutages<AccessLogStore>({
    async add(records) {
      if (records.length === 0) return;
      await count(records, await insertOnce(records));
    },

    async page(clientId, { limit, after, filter: given = {} }) {
      const filter: Filter<EntryDocument> = { clientId };
      if (given.from !== undefined || given.to !== undefined) {
        filter.at = {
          ...(given.from === undefined ? {} : { $gte: new Date(given.from) }),
          ...(given.to === undefined ? {} : { $lt: new Date(given.to) }),
        };
      }
      if (given.status) filter.status = { $gte: given.status.min, $lte: given.status.max };
      if (given.address !== undefined) filter.clientAddress = given.address;
      if (given.resource !== undefined) filter.resource = given.resource;
      if (after) {
        const at = new Date(after.at);
        filter.$or = [
          { at: { $lt: at } },
          { at, requestId: { $lt: after.requestId } },
          { at, requestId: after.requestId, _id: { $lt: after.id } },
        ];
      }
      const found = await entries.find(filter, { sort: { at: -1, requestId: -1, _id: -1 }, limit }).toArray();
      return found.map(recordOf);
    },

    async dailyReads(clientId, from, to) {
      // The hour buckets (at most 24 a day), summed here: FerretDB 1.24 has no date operators in $group.
      const hours = await usage
        .find(
          { clientId, grain: 'hour', bucket: { $gte: new Date(bucketStart('hour', from.getTime())), $lt: to } },
          { projection: { bucket: 1, reads: 1, refusals: 1 } },
        )
        .toArray();
      return dailyFromHours(
        hours.flatMap(({ bucket, reads, refusals }) =>
          bucket ? [{ start: bucket.getTime(), reads: reads ?? 0, refusals: refusals ?? 0 }] : [],
        ),
      );
    },

    async usage(clientIds, now) {
      const answer = new Map<string, RecordUsage>(clientIds.map((clientId) => [clientId, NO_USAGE]));
      if (clientIds.length === 0) return answer;
      const ranges = usageBucketRanges(now).map(({ grain, from, to }) => ({
        grain,
        bucket: { $gte: new Date(from), ...(to === undefined ? {} : { $lt: new Date(to) }) },
      }));
      const [buckets, lasts] = await Promise.all([
        usage
          .find({ clientId: { $in: [...clientIds] }, $or: ranges }, { projection: { clientId: 1, grain: 1, bucket: 1, reads: 1 } })
          .toArray(),
        usage.find({ _id: { $in: clientIds.map((clientId) => `${clientId}|last`) } }).toArray(),
      ]);
      const byClient = new Map<string, UsageBucket[]>();
      for (const { clientId, grain, bucket, reads } of buckets) {
        if (grain === 'last' || !bucket) continue;
        byClient.set(clientId, [...(byClient.get(clientId) ?? []), { grain, start: bucket.getTime(), reads: reads ?? 0 }]);
      }
      for (const { clientId, lastUsedAt } of lasts) {
        if (!lastUsedAt) continue;
        answer.set(clientId, { lastUsedAt: lastUsedAt.toISOString(), usage: usageFrom(byClient.get(clientId) ?? [], now) });
      }
      return answer;
    },

    // Where the TTL index works these find little or nothing; on FerretDB they are the expiry.
    async prune(before, now) {
      await entries.deleteMany({ at: { $lt: before } });
      await usage.deleteMany({ grain: { $in: ['minute', 'hour'] }, bucket: { $lt: new Date(now.getTime() - USAGE_BUCKET_RETENTION_MS) } });
    },

    async purgeClients(clientIds) {
      if (clientIds.length === 0) return;
      // Counts still being raised for these Client IDs land first, so none is left behind the purge.
      await raises.idle();
      await entries.deleteMany({ clientId: { $in: [...clientIds] } });
      await usage.deleteMany({ clientId: { $in: [...clientIds] } });
    },

    async eraseAddresses(clientId) {
      await entries.updateMany({ clientId, clientAddress: { $ne: null } }, { $set: { clientAddress: null } });
    },

    close: () => raises.idle(),
  });
}

function bucketId(clientId: string, grain: UsageGrain, start: number): string {
  return `${clientId}|${grain}|${new Date(start).toISOString()}`;
}

function documentOf(record: AccessRecord): EntryDocument {
  const { id, clientId, at, requestId, resource, status, code, clientAddress, certificate } = record;
  const described = certificate ? { certificate: { asOf: certificate.asOf, format: certificate.format } } : {};
  return { _id: id, clientId, at: new Date(at), requestId, resource, status, code, clientAddress, ...described };
}

function recordOf(document: EntryDocument): AccessRecord {
  const { _id, clientId, at, requestId, resource, status, code, clientAddress, certificate } = document;
  const described = certificate ? { certificate: { asOf: certificate.asOf, format: certificate.format } } : {};
  return { id: _id, clientId, at: at.toISOString(), requestId, resource, status, code, clientAddress, ...described };
}
