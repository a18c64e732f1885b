import type { Db } from 'mongodb';
import type { DestroyedSubjectKey, SubjectKey, SubjectKeyStore } from '@rsd/ports';
import { isDuplicateKeyError } from './duplicate-key';
import { reportingOutages } from './outages';

export const SUBJECT_KEYS_COLLECTION = 'subject_keys';

/** One subject: its wrapped key, or only the instant it was destroyed. */
interface SubjectKeyDocument {
  _id: string;
  wrappedKey?: string;
  createdAt?: string;
  destroyedAt?: string;
}

/**
 * Decision 56's subject keys on MongoDB (or FerretDB). Give it a database of its own, not the event
 * log's or the views': a dump of those then carries no key. A subject's key is created by an insert
 * under its `_id` (one writer wins, the others read the winner's); destroying replaces the document
 * by one without the key, kept for good so that the subject never gets another.
 */
export function openMongoSubjectKeyStore(db: Db): Promise<SubjectKeyStore> {
  const keys = db.collection<SubjectKeyDocument>(SUBJECT_KEYS_COLLECTION);
  const find = async (subject: string) => subjectKeyOf(subject, await keys.findOne({ _id: subject }));

  // `_id` is the only index it needs: nothing to create before it opens.
  return Promise.resolve(
    reportingOutages<SubjectKeyStore>({
      async getOrCreate(subject, candidate) {
        try {
          await keys.insertOne({ _id: subject, wrappedKey: candidate.wrappedKey, createdAt: candidate.createdAt });
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
        }
        return (await find(subject)) as SubjectKey;
      },

      read: find,

      async destroy(subject, at) {
        try {
          // A whole replacement of a live key's document (the key's field gone, not nulled beside it), or
          // an insert where there is none; a destroyed one matches nothing and keeps its first instant.
          await keys.replaceOne({ _id: subject, destroyedAt: { $exists: false } }, { destroyedAt: at }, { upsert: true });
        } catch (error) {
          // The upsert's insert met a document: destroyed already, or created since, which is replaced now.
          if (!isDuplicateKeyError(error)) throw error;
          await keys.replaceOne({ _id: subject, destroyedAt: { $exists: false } }, { destroyedAt: at });
        }
        return (await find(subject)) as DestroyedSubjectKey;
      },

      async list(after, limit) {
        const documents = await keys
          .find(after === undefined ? {} : { _id: { $gt: after } })
          .sort({ _id: 1 })
          .limit(limit)
          .toArray();
        return documents.map((document) => subjectKeyOf(document._id, document) as SubjectKey);
      },

      async rewrap(subject, from, to) {
        // Atomic on MongoDB. FerretDB 1.24 applies it as a read and a rewrite, so a destruction landing
        // between the two could be written over: the rotation re-applies the log's erasures after it
        // (docs/decisions/0056-erasure-and-offboarding.md).
        const { modifiedCount } = await keys.updateOne(
          { _id: subject, wrappedKey: from, destroyedAt: { $exists: false } },
          { $set: { wrappedKey: to } },
        );
        return modifiedCount === 1;
      },

      close: () => Promise.resolve(),
    }),
  );
}

function subjectKeyOf(subject: string, document: SubjectKeyDocument | null): SubjectKey | undefined {
  if (!document) return undefined;
  if (document.destroyedAt !== undefined) return { state: 'destroyed', subject, destroyedAt: document.destroyedAt };
  return { state: 'active', subject, wrappedKey: document.wrappedKey as string, createdAt: document.createdAt as string };
}
