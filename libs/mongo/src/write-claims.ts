import type { Collection, Db, Document, Filter, UpdateFilter } from 'mongodb';
import type { OutboxEntry } from '@rsd/ports';
import { isDuplicateKeyError } from './duplicate-key';
import { entryOf } from './outbox-fields';
import { ensureExpiry } from './expiry-index';

/** Where writers claim an authorization's next write sequence number (a collection of its own: no query of the authorizations sees it). */
export const WRITE_CLAIMS_COLLECTION = 'authorization_write_claims';

/**
 * A claim left this long by a writer while the document has not moved is taken over: its writer is
 * taken to have died. Far above any write's time, so that only a writer stalled longer (a paused
 * process) can still write after a takeover: the one window that remains.
 */
export const CLAIM_TAKEOVER_MS = 30_000;
/** Claims this old are swept where the server keeps no TTL index (FerretDB 1.24): their writers are long gone. */
const CLAIM_SWEEP_AGE_MS = 10 * 60_000;
const CLAIM_SWEEP_EVERY_MS = 60_000;
/** A writer that finds the next number held reads again after 10, 20, 40 and 80 ms, then gives up. */
const CLAIM_TRIES = 5;
/** Reads of the document at most, counting those again at once after it moved between a read and the write. */
const MAX_READS = 25;
const CLAIM_BACKOFF_MS = 10;

interface WriteClaim {
  /** `<document _id>#<write sequence number>`. */
  _id: string;
  at: Date;
}

/** The write sequence a claimed write requires and sets. */
export interface Sequence {
  filter: { writeSeq: number } | { writeSeq: { $exists: false } };
  set: { writeSeq: number };
}

/**
 * Runs `write` as the one writer of a document's next write sequence number, or returns `lost`.
 * `read` reads the document (with its `writeSeq`, 0 when absent) and whatever the write needs, or
 * undefined when there is nothing to write (`skipped`). The writer claims number s+1 by inserting
 * `<_id>#<s+1>`: a unique `_id`, so of writers that read s exactly one inserts it; the others read
 * again after a short wait, and give up after CLAIM_TRIES (an update then answers false, and the
 * command runner reads and decides again). The winner writes with a filter on `writeSeq` s and sets
 * s+1 (`write` answers whether it matched), so even a writer whose claim was taken over cannot write
 * over a later write, and deletes its claim afterwards. A writer that read s only after that
 * deletion claims s+1 again but matches nothing: it reads again at once and finds s+1.
 */
export type SoleWriter = <D extends { writeSeq?: number }>(
  id: string,
  read: () => Promise<D | undefined>,
  write: (read: D, sequence: Sequence) => Promise<boolean>,
) => Promise<'written' | 'skipped' | 'lost'>;

export async function openWriteClaims(db: Db, collection = WRITE_CLAIMS_COLLECTION): Promise<SoleWriter> {
  const claims = db.collection<WriteClaim>(collection);
  const expiring = await ensureExpiry(claims, 'at', CLAIM_SWEEP_AGE_MS / 1000);
  let sweptAt = 0;

  /**
   * This writer's claim on `claimId`, or undefined when another writer holds it. A claim older than
   * CLAIM_TAKEOVER_MS is deleted (exactly that one, by its time) and claimed again.
   */
  async function claim(claimId: string): Promise<WriteClaim | undefined> {
    for (let takeover = 0; takeover < 2; takeover += 1) {
      const mine = { _id: claimId, at: new Date() };
      try {
        await claims.insertOne(mine);
        return mine;
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      const held = await claims.findOne({ _id: claimId });
      if (held && Date.now() - held.at.getTime() < CLAIM_TAKEOVER_MS) return undefined;
      if (held) await claims.deleteOne({ _id: claimId, at: held.at });
    }
    return undefined;
  }

  /** Without a TTL index, claims left by writers that died are deleted now and then, by the `at` index. */
  async function sweep(): Promise<void> {
    if (expiring || Date.now() - sweptAt < CLAIM_SWEEP_EVERY_MS) return;
    sweptAt = Date.now();
    await claims.deleteMany({ at: { $lt: new Date(Date.now() - CLAIM_SWEEP_AGE_MS) } });
  }

  return async (id, read, write) => {
    let lostClaims = 0;
    for (let reads = 0; reads < MAX_READS; reads += 1) {
      const stored = await read();
      if (!stored) return 'skipped';
      const seq = stored.writeSeq ?? 0;
      const mine = await claim(`${id}#${seq + 1}`);
      if (!mine) {
        lostClaims += 1;
        if (lostClaims >= CLAIM_TRIES) return 'lost';
        await new Promise((resolve) => setTimeout(resolve, CLAIM_BACKOFF_MS * 2 ** (lostClaims - 1)));
        continue;
      }
      try {
        const sequence: Sequence = { filter: seq === 0 ? { writeSeq: { $exists: false } } : { writeSeq: seq }, set: { writeSeq: seq + 1 } };
        if (await write(stored, sequence)) return 'written';
      } finally {
        // Only this writer's claim: after a takeover the number is another writer's.
        await claims.deleteOne(mine).catch(() => undefined);
        await sweep().catch(() => undefined);
      }
      // The document moved between the read and the claim (its writer had deleted its claim by then): read again at once.
    }
    return 'lost';
  };
}

/**
 * The revision-guarded update of a document of the authorizations' collection (a grant, a recipient
 * account, an access review): written only while it is at `expectedRevision`, as the one writer of its
 * next write sequence, with the entries it owes in `outbox`. `match` narrows the document (its kind);
 * `update`'s `$set` is joined by the sequence's. False when another write got there first (the command runner reads and decides again).
 */
export async function updateAtRevision<D extends Document>(
  soleWriter: SoleWriter,
  collection: Collection<D>,
  target: { id: string; match?: Document; expectedRevision: number; outbox: readonly OutboxEntry[] },
  update: UpdateFilter<D>,
): Promise<boolean> {
  const { id, match = {}, expectedRevision, outbox } = target;
  // What the write owes is pushed onto the document's outbox in the same update.
  const owes = outbox.length > 0;
  const document = { _id: id, ...match };
  const written = await soleWriter(
    id,
    async () => {
      const stored = await collection.findOne<{ revision?: number; writeSeq?: number }>(document as Filter<D>, {
        projection: { revision: 1, writeSeq: 1 },
      });
      return stored?.revision === expectedRevision ? stored : undefined;
    },
    async (_stored, sequence) => {
      const result = await collection.updateOne(
        { ...document, revision: expectedRevision, ...sequence.filter } as Filter<D>,
        {
          ...update,
          $set: { ...update.$set, ...(owes ? { hasOutbox: true } : {}), ...sequence.set },
          ...(owes ? { $push: { outbox: { $each: outbox.map(entryOf) } } } : {}),
        } as unknown as UpdateFilter<D>,
      );
      return result.matchedCount === 1;
    },
  );
  return written === 'written';
}
