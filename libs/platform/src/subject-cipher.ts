import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { DestroyedSubjectKey, SubjectId, SubjectKeyStore, SubjectKeyWrapping, SecretSpec } from '@rsd/ports';
import { ConfigError } from './config';
import { secretsFromFiles } from './secret-files';

/** The master key's variable (or `…_FILE`): 32 random bytes, base64, which wrap every subject's key. */
export const SUBJECT_KEYS_MASTER_KEY = 'SUBJECT_KEYS_MASTER_KEY';
/**
 * The master key being rotated away from (or `…_FILE`): it only unwraps, the keys it wrapped, until
 * `subject-keys rotate` has re-wrapped every one under the current master key.
 */
export const SUBJECT_KEYS_PREVIOUS_MASTER_KEY = 'SUBJECT_KEYS_PREVIOUS_MASTER_KEY';

/**
 * The master key as a secret of the services (decision 56): required on the distributed runtime (every
 * replica opens what the others sealed), made into the data directory on the embedded runtime's first
 * start. Its file is no database, so `rsd backup` never carries it with the log it opens.
 */
export const SUBJECT_KEYS_MASTER_KEY_SECRET: SecretSpec = {
  variable: SUBJECT_KEYS_MASTER_KEY,
  file: 'subject-keys-master.key',
  generate: () => randomBytes(KEY_BYTES).toString('base64'),
  requiredBecause: 'it opens the personal data sealed in the event log, and every replica must hold the same (decision 56)',
};

/** The sealed format's version, in every sealed value and in its associated data. */
export const SEALED_VERSION = 1;

/**
 * A JSON value sealed for one data subject (decision 56's crypto-shredding), as it is kept in an event:
 * AES-256-GCM under the subject's key, `nonce` (96 bits) and `ciphertext` (the encrypted JSON text
 * followed by its 128-bit tag) in base64url. The subject and the version are authenticated with it,
 * so a value moved to another subject or version does not open.
 */
export interface SealedValue {
  v: typeof SEALED_VERSION;
  subject: SubjectId;
  nonce: string;
  ciphertext: string;
}

/** The subject's key is destroyed: what was sealed for it is gone for good (not a fault). */
export interface Erased {
  status: 'erased';
  subject: SubjectId;
  destroyedAt: string;
}

export type SealOutcome = { status: 'sealed'; sealed: SealedValue } | Erased;
export type OpenOutcome<T = unknown> = { status: 'opened'; value: T } | Erased;

/** Why a sealed value cannot be opened although its subject is not erased: a fault of the data or the configuration. */
export type SealedValueProblem = 'malformed' | 'tampered' | 'no-key' | 'wrong-master-key';

/** A sealed value that cannot be opened for another reason than an erasure; its message names no key and no content. */
export class SealedValueError extends Error {
  constructor(
    readonly problem: SealedValueProblem,
    readonly subject?: SubjectId,
  ) {
    super(`sealed value cannot be opened (${problem}${subject ? `, subject ${subject}` : ''})`);
    this.name = 'SealedValueError';
  }
}

export interface SubjectCipher {
  /** Seals `value` (anything JSON can hold) with the subject's key, made on first use; an erased subject answers erased. */
  seal(subject: SubjectId, value: unknown): Promise<SealOutcome>;
  /** The same for a value given as its JSON text (made by hand where building the value would cost more than its text). */
  sealJson(subject: SubjectId, json: string): Promise<SealOutcome>;
  /** The value sealed, or erased when its subject's key is destroyed; throws SealedValueError for any other failure. */
  open<T = unknown>(sealed: SealedValue): Promise<OpenOutcome<T>>;
  /** Drops what the cipher keeps in memory of the subject's key: the next use reads the key store (an erasure seen). */
  forget(subject: SubjectId): void;
  /** Its master keys' view of a wrapped key: which one wrapped it, and its re-wrapping under the current one. */
  wrapping: SubjectKeyWrapping;
}

/**
 * How long an opened key is kept in memory: a key destroyed on another replica stops opening anything
 * here at most this long after (at once where this process sees the erasure's event).
 */
export const SUBJECT_KEY_CACHE_TTL_MS = 30_000;
/** How many subjects' keys a process keeps opened (least recently used first out). */
export const SUBJECT_KEY_CACHE_SIZE = 10_000;

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const WRAP_VERSION = 'v1';
/**
 * A subject id: its kind and its id, no space (the associated data joins parts with a line break). A
 * grant stands for its recipient when the recipient has no account.
 */
const SUBJECT = /^(organization|account|grant):\S{1,256}$/;

/**
 * Decision 56's cipher: a key per subject, made at random, kept in the subject key store only wrapped
 * (AES-256-GCM) under the master key, which lives in the environment, apart from both the store and
 * the log: a copy of the store alone opens nothing, and destroying a subject's stored key makes its
 * values unreadable wherever copies of them are.
 */
export function subjectCipher(options: {
  store: SubjectKeyStore;
  masterKey: Buffer;
  /** The master key being rotated away from: it unwraps the keys it wrapped, and wraps nothing. */
  previousMasterKey?: Buffer;
  now?: () => Date;
  cache?: { ttlMs?: number; size?: number };
}): SubjectCipher {
  const { store } = options;
  const now = options.now ?? (() => new Date());
  const cache = new KeyCache(options.cache?.size ?? SUBJECT_KEY_CACHE_SIZE, options.cache?.ttlMs ?? SUBJECT_KEY_CACHE_TTL_MS, now);
  // One reading of the store per subject at a time: the events of one organization arriving together
  // (a batch of scores, a replica catching up) wait for the same answer instead of each asking the store.
  // A reading under way when its subject is forgotten may answer what the store held before the erasure:
  // it is marked stale and its answer not kept, and the next use reads the store again.
  const reading = new Map<string, { answer: Promise<StoredKey>; mark: { stale: boolean } }>();
  const once = (name: string, read: () => Promise<StoredKey>): Promise<StoredKey> => {
    const pending = reading.get(name);
    if (pending) return pending.answer;
    const subject = name.slice(name.indexOf(' ') + 1);
    const mark = { stale: false };
    const answer: Promise<StoredKey> = read()
      .then((key) => {
        if (!mark.stale) cache.set(subject, key);
        return key;
      })
      .finally(() => {
        if (reading.get(name)?.answer === answer) reading.delete(name);
      });
    reading.set(name, { answer, mark });
    return answer;
  };
  const keys = masterKeys(options.masterKey, options.previousMasterKey);
  const { wrap, unwrap } = keys;

  const cipher: SubjectCipher = {
    seal: (subject, value) => cipher.sealJson(subject, JSON.stringify(value)),

    async sealJson(subject, json) {
      if (!SUBJECT.test(subject)) throw new TypeError('a subject is organization:<id>, account:<id> or grant:<id>');
      const cached = cache.get(subject);
      // A subject known to have no key gets one now: sealing makes it.
      const key =
        (cached === NO_KEY ? undefined : cached) ??
        (await once(`seal ${subject}`, async () => {
          // A read first: most seals are for a subject that has its key (an organization scored again), and
          // getOrCreate is a write (on FerretDB an insert refused, then a read; on SQLite a commit and its sync).
          const stored =
            (await store.read(subject)) ??
            (await store.getOrCreate(subject, {
              wrappedKey: wrap(subject, randomBytes(KEY_BYTES)),
              createdAt: now().toISOString(),
            }));
          return stored.state === 'destroyed' ? stored : unwrap(subject, stored.wrappedKey);
        }));
      if (key === NO_KEY) throw new SealedValueError('no-key', subject);
      if (!Buffer.isBuffer(key)) return erased(subject, key.destroyedAt);
      const { nonce, ciphertext } = encrypt(key, Buffer.from(json, 'utf8'), sealData(subject));
      return {
        status: 'sealed',
        sealed: { v: SEALED_VERSION, subject, nonce: nonce.toString('base64url'), ciphertext: ciphertext.toString('base64url') },
      };
    },

    async open<T>(sealed: SealedValue): Promise<OpenOutcome<T>> {
      if (!isSealedValue(sealed)) throw new SealedValueError('malformed');
      const { subject } = sealed;
      const key =
        cache.get(subject) ??
        (await once(`open ${subject}`, async () => {
          const stored = await store.read(subject);
          // Kept as an answer too: a log replayed from its start may hold many values of a subject without a key.
          if (!stored) return NO_KEY;
          return stored.state === 'destroyed' ? stored : unwrap(subject, stored.wrappedKey);
        }));
      if (key === NO_KEY) throw new SealedValueError('no-key', subject);
      if (!Buffer.isBuffer(key)) return erased(subject, key.destroyedAt);
      const plain = decrypt(key, Buffer.from(sealed.nonce, 'base64url'), Buffer.from(sealed.ciphertext, 'base64url'), sealData(subject));
      if (!plain) throw new SealedValueError('tampered', subject);
      return { status: 'opened', value: JSON.parse(plain.toString('utf8')) as T };
    },

    wrapping: keys.wrapping,

    forget: (subject) => {
      cache.delete(subject);
      for (const name of [`seal ${subject}`, `open ${subject}`]) {
        const pending = reading.get(name);
        if (pending) pending.mark.stale = true;
        reading.delete(name);
      }
    },
  };
  return cipher;
}

/**
 * The master keys: the current one wraps and unwraps; the previous one, during a rotation, only
 * unwraps what it wrapped. A wrapped key names its master key by a digest (the first 48 bits of its
 * SHA-256, base64url), so a key wrapped by neither is named as such rather than failing as a tag.
 */
function masterKeys(
  masterKey: Buffer,
  previousMasterKey: Buffer | undefined,
): {
  wrap: (subject: SubjectId, key: Buffer) => string;
  unwrap: (subject: SubjectId, wrapped: string) => Buffer;
  wrapping: SubjectKeyWrapping;
} {
  if (masterKey.length !== KEY_BYTES) throw new ConfigError([`${SUBJECT_KEYS_MASTER_KEY}: must be ${KEY_BYTES} bytes, base64`]);
  if (previousMasterKey && previousMasterKey.length !== KEY_BYTES) {
    throw new ConfigError([`${SUBJECT_KEYS_PREVIOUS_MASTER_KEY}: must be ${KEY_BYTES} bytes, base64`]);
  }
  if (previousMasterKey?.equals(masterKey)) {
    throw new ConfigError([`${SUBJECT_KEYS_PREVIOUS_MASTER_KEY}: is ${SUBJECT_KEYS_MASTER_KEY} itself: give the key rotated away from`]);
  }
  const masterKeyId = masterKeyIdOf(masterKey);
  const previousMasterKeyId = previousMasterKey ? masterKeyIdOf(previousMasterKey) : undefined;
  const byId = new Map([[masterKeyId, masterKey]]);
  if (previousMasterKey && previousMasterKeyId) byId.set(previousMasterKeyId, previousMasterKey);
  const wrap = (subject: SubjectId, key: Buffer): string => {
    const { nonce, ciphertext } = encrypt(masterKey, key, wrapData(subject));
    return [WRAP_VERSION, masterKeyId, nonce.toString('base64url'), ciphertext.toString('base64url')].join('.');
  };
  const unwrap = (subject: SubjectId, wrapped: string): Buffer => {
    const [version, keyId, nonce, ciphertext] = wrapped.split('.');
    const opening = keyId === undefined ? undefined : byId.get(keyId);
    if (version !== WRAP_VERSION || !opening || !nonce || !ciphertext) throw new SealedValueError('wrong-master-key', subject);
    const key = decrypt(opening, Buffer.from(nonce, 'base64url'), Buffer.from(ciphertext, 'base64url'), wrapData(subject));
    if (!key) throw new SealedValueError('wrong-master-key', subject);
    return key;
  };
  return {
    wrap,
    unwrap,
    wrapping: {
      masterKeyId,
      ...(previousMasterKeyId ? { previousMasterKeyId } : {}),
      wrappedBy: (wrapped) => (wrapped.startsWith(`${WRAP_VERSION}.`) ? wrapped.split('.')[1] : undefined),
      rewrap: (subject, wrapped) => {
        const key = unwrap(subject, wrapped);
        return wrapped.split('.')[1] === masterKeyId ? wrapped : wrap(subject, key);
      },
    },
  };
}

/** The master keys' view of the stored keys, for the key store's backups and a rotation (no cipher, no store). */
export function subjectKeyWrapping(masterKey: Buffer, previousMasterKey?: Buffer): SubjectKeyWrapping {
  return masterKeys(masterKey, previousMasterKey).wrapping;
}

/** How a wrapped key names the master key that wrapped it. */
export const masterKeyIdOf = (masterKey: Buffer): string => createHash('sha256').update(masterKey).digest('base64url').slice(0, 8);

/**
 * Subjects' keys (unwrapped) and erasures, as last read from the key store, each for `ttlMs` at most,
 * the least recently used dropped past `size`. A destruction is final, but it is kept no longer than a
 * key: the store stays the one answer.
 */
/** A subject with no key in the store (a key store restored from too old a backup, another deployment's values). */
const NO_KEY = Symbol('no key');
/** What the cache keeps of a subject: its key, its destruction, or that it has none. */
type StoredKey = Buffer | DestroyedSubjectKey | typeof NO_KEY;

class KeyCache {
  private readonly entries = new Map<SubjectId, { key: StoredKey; until: number }>();

  constructor(
    private readonly size: number,
    private readonly ttlMs: number,
    private readonly now: () => Date,
  ) {}

  get(subject: SubjectId): StoredKey | undefined {
    const entry = this.entries.get(subject);
    if (!entry) return undefined;
    this.entries.delete(subject);
    if (entry.until <= this.now().getTime()) return undefined;
    // Moved to the end: the Map's order is the order of use.
    this.entries.set(subject, entry);
    return entry.key;
  }

  set(subject: SubjectId, key: StoredKey): void {
    if (this.ttlMs <= 0 || this.size <= 0) return;
    this.entries.delete(subject);
    this.entries.set(subject, { key, until: this.now().getTime() + this.ttlMs });
    while (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(subject: SubjectId): void {
    this.entries.delete(subject);
  }
}

/** Whether `value` has the sealed format's shape (not whether it opens). */
export function isSealedValue(value: unknown): value is SealedValue {
  if (typeof value !== 'object' || value === null) return false;
  const { v, subject, nonce, ciphertext } = value as Record<string, unknown>;
  return (
    v === SEALED_VERSION &&
    typeof subject === 'string' &&
    SUBJECT.test(subject) &&
    typeof nonce === 'string' &&
    typeof ciphertext === 'string' &&
    Object.keys(value).length === 4
  );
}

/**
 * The master key from the environment: SUBJECT_KEYS_MASTER_KEY, or the file SUBJECT_KEYS_MASTER_KEY_FILE
 * names (a mounted Secret). Missing, unreadable or not 32 bytes is a configuration error that names the
 * variable, never the value.
 */
export function subjectKeysMasterKey(env: NodeJS.ProcessEnv): Buffer {
  const key = masterKeyIn(env, SUBJECT_KEYS_MASTER_KEY);
  if (!key)
    throw new ConfigError([`${SUBJECT_KEYS_MASTER_KEY}: required (${KEY_BYTES} random bytes, base64), or ${SUBJECT_KEYS_MASTER_KEY}_FILE`]);
  return key;
}

/**
 * The previous master key from the environment (a rotation under way): SUBJECT_KEYS_PREVIOUS_MASTER_KEY
 * or its `_FILE`; undefined when neither is set; read and checked as the current one.
 */
export function subjectKeysPreviousMasterKey(env: NodeJS.ProcessEnv): Buffer | undefined {
  return masterKeyIn(env, SUBJECT_KEYS_PREVIOUS_MASTER_KEY);
}

function masterKeyIn(env: NodeJS.ProcessEnv, variable: string): Buffer | undefined {
  const { env: resolved, problems } = secretsFromFiles(env, [variable]);
  if (problems.length > 0) throw new ConfigError(problems.map((problem) => `${problem.variable}: ${problem.message}`));
  const value = resolved[variable];
  if (!value) return undefined;
  const key = Buffer.from(value.trim(), 'base64');
  if (key.length !== KEY_BYTES || key.toString('base64') !== value.trim()) {
    throw new ConfigError([`${variable}: must be ${KEY_BYTES} bytes, base64`]);
  }
  return key;
}

const erased = (subject: SubjectId, destroyedAt: string): Erased => ({ status: 'erased', subject, destroyedAt });
/** The associated data of a sealed value and of a wrapped key: what they are, their version, their subject. */
const sealData = (subject: SubjectId) => Buffer.from(`rsd-sealed\n${SEALED_VERSION}\n${subject}`, 'utf8');
const wrapData = (subject: SubjectId) => Buffer.from(`rsd-subject-key\n${WRAP_VERSION}\n${subject}`, 'utf8');

/**
 * Nonces are drawn from random bytes fetched 4 KiB at a time: fetched one nonce at a time, the system's
 * generator was a tenth of the process's work when a batch of scores is sealed. A slice is handed out
 * once, and a full pool is replaced, never refilled, so no nonce given out changes.
 */
const NONCE_POOL_BYTES = NONCE_BYTES * 341;
let noncePool = Buffer.alloc(0);
let noncePoolAt = 0;
function freshNonce(): Buffer {
  if (noncePoolAt + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_BYTES);
    noncePoolAt = 0;
  }
  noncePoolAt += NONCE_BYTES;
  return noncePool.subarray(noncePoolAt - NONCE_BYTES, noncePoolAt);
}

function encrypt(key: Buffer, plain: Buffer, associated: Buffer): { nonce: Buffer; ciphertext: Buffer } {
  const nonce = freshNonce();
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(associated);
  return { nonce, ciphertext: Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]) };
}

/** The plain bytes, or undefined when the tag does not verify (another key, other associated data, a changed byte). */
function decrypt(key: Buffer, nonce: Buffer, ciphertext: Buffer, associated: Buffer): Buffer | undefined {
  if (nonce.length !== NONCE_BYTES || ciphertext.length < TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(associated);
    decipher.setAuthTag(ciphertext.subarray(ciphertext.length - TAG_BYTES));
    return Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}
