/**
 * A data subject: whose personal data a key protects, `organization:<id>`, `account:<id>`, or
 * `grant:<clientId>` for a grant's recipient that has no account.
 * Decision 56's crypto-shredding gives each subject one key; destroying it erases what it sealed.
 */
export type SubjectId = string;

/** A subject's key as stored: wrapped by the master key, so the store alone holds no usable key. */
export interface ActiveSubjectKey {
  state: 'active';
  subject: SubjectId;
  /** The key wrapped under the master key (opaque to the store). */
  wrappedKey: string;
  /** ISO instant. */
  createdAt: string;
}

/** A subject whose key was destroyed: nothing it sealed can be opened again, and it never gets a new key. */
export interface DestroyedSubjectKey {
  state: 'destroyed';
  subject: SubjectId;
  /** ISO instant of the first destruction. */
  destroyedAt: string;
}

export type SubjectKey = ActiveSubjectKey | DestroyedSubjectKey;

/**
 * Where the subjects' keys live, apart from the event log (its own database file or database), so
 * that a copy of the log never carries the keys that open it.
 */
export interface SubjectKeyStore {
  /**
   * The subject's key; when it has none yet, `candidate` becomes it. Of several callers at once, one
   * candidate wins and all are answered with it. A destroyed subject answers destroyed, for good.
   */
  getOrCreate(subject: SubjectId, candidate: { wrappedKey: string; createdAt: string }): Promise<SubjectKey>;
  /** The subject's key, destroyed, or undefined when it never had one. */
  read(subject: SubjectId): Promise<SubjectKey | undefined>;
  /**
   * Destroys the subject's key: final, and idempotent (a second call keeps the first `destroyedAt`).
   * A subject that never had a key is marked destroyed too, so none is ever made for it. The wrapped
   * key is overwritten where the engine allows it, not only unlinked from an index.
   */
  destroy(subject: SubjectId, at: string): Promise<DestroyedSubjectKey>;
  /**
   * Up to `limit` subjects (keys and tombstones) after `after` in the order of their ids, for a
   * backup or a rotation paging through the store while it serves.
   */
  list(after: SubjectId | undefined, limit: number): Promise<SubjectKey[]>;
  /**
   * Replaces the subject's wrapped key by `to` only if it is still `from` and not destroyed (a master
   * key's rotation); answers whether it did. A row changed meanwhile (destroyed, rewrapped) is left as it is.
   */
  rewrap(subject: SubjectId, from: string, to: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * What the master keys say of a wrapped key (decision 56), without handing out a key: for the key
 * store's backups and a rotation of the master key.
 */
export interface SubjectKeyWrapping {
  /** The current master key's digest, with which every key it wraps is prefixed. */
  masterKeyId: string;
  /** The previous master key's digest, while one is configured for a rotation. */
  previousMasterKeyId?: string;
  /** The digest of the master key that wrapped `wrappedKey` (not whether it opens). */
  wrappedBy(wrappedKey: string): string | undefined;
  /**
   * The key wrapped under the current master key: `wrappedKey` itself when it already is, else a
   * new wrapping of what the previous master key opens. Throws SealedValueError (`wrong-master-key`)
   * when neither opens it.
   */
  rewrap(subject: SubjectId, wrappedKey: string): string;
}
