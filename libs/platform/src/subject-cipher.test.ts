import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteSubjectKeyStore } from '@rsd/embedded';
import { ConfigError, SealedValueError, subjectCipher, subjectKeysMasterKey, type SealedValue } from '@rsd/platform';
import type { SubjectKeyStore } from '@rsd/ports';
import { aStoreInATempDirectoryPerTest } from '@rsd/testkit';

const RECIPIENT = { name: 'Jane Roe', email: 'jane.roe@example.com', address: '203.0.113.7' };

describe('subject cipher', () => {
  const store: SubjectKeyStore = aStoreInATempDirectoryPerTest('subject-cipher', (dir) =>
    openSqliteSubjectKeyStore({ file: join(dir, 'subject-keys.db') }),
  );
  const masterKey = randomBytes(32);

  async function sealed(subject: string, value: unknown = RECIPIENT): Promise<SealedValue> {
    const outcome = await subjectCipher({ store, masterKey }).seal(subject, value);
    if (outcome.status !== 'sealed') throw new Error(`not sealed: ${outcome.status}`);
    return outcome.sealed;
  }

  it('when a value is sealed for a subject, then it opens to the same value, and nothing of it is readable in the sealed form', async () => {
    const cipher = subjectCipher({ store, masterKey });

    const value = await sealed('organization:acme');

    expect(Object.keys(value).sort()).toEqual(['ciphertext', 'nonce', 'subject', 'v']);
    expect(value).toMatchObject({ v: 1, subject: 'organization:acme' });
    expect(Buffer.from(value.nonce, 'base64url')).toHaveLength(12);
    expect(JSON.stringify(value)).not.toMatch(/Jane|example\.com|203\.0\.113/);
    expect(await cipher.open(value)).toEqual({ status: 'opened', value: RECIPIENT });
    expect((await sealed('organization:acme')).nonce).not.toBe(value.nonce);
  });

  it('when more values are sealed than one fetch of random bytes gives nonces for, then every nonce is new and every value opens', async () => {
    const cipher = subjectCipher({ store, masterKey });
    const values = [];
    for (let n = 0; n < 1_000; n += 1) values.push(await sealed('organization:acme', { n }));

    expect(new Set(values.map(({ nonce }) => nonce)).size).toBe(values.length);
    for (const [n, value] of values.entries()) expect(await cipher.open(value)).toEqual({ status: 'opened', value: { n } });
  });

  it('when a byte of the ciphertext or the nonce is changed, then it does not open', async () => {
    const cipher = subjectCipher({ store, masterKey });
    const value = await sealed('organization:acme');
    const flipped = (text: string, at: number) => {
      const bytes = Buffer.from(text, 'base64url');
      bytes.writeUInt8((bytes.readUInt8(at) ^ 0x01) & 0xff, at);
      return bytes.toString('base64url');
    };

    for (const changed of [
      { ...value, ciphertext: flipped(value.ciphertext, 0) },
      { ...value, ciphertext: flipped(value.ciphertext, Buffer.from(value.ciphertext, 'base64url').length - 1) },
      { ...value, nonce: flipped(value.nonce, 5) },
    ]) {
      await expect(cipher.open(changed)).rejects.toEqual(new SealedValueError('tampered', 'organization:acme'));
    }
  });

  it("when a sealed value is opened under another subject's key, then it does not open", async () => {
    const cipher = subjectCipher({ store, masterKey });
    const acme = await sealed('organization:acme');
    await sealed('organization:globex');

    await expect(cipher.open({ ...acme, subject: 'organization:globex' })).rejects.toEqual(
      new SealedValueError('tampered', 'organization:globex'),
    );
  });

  it("when the subject's key is destroyed, then its values answer erased, new ones are refused, and other subjects still open", async () => {
    const cipher = subjectCipher({ store, masterKey });
    const acme = await sealed('organization:acme');
    const globex = await sealed('organization:globex', { name: 'Globex' });

    await store.destroy('organization:acme', '2026-12-02T11:00:00.000Z');

    const erased = { status: 'erased', subject: 'organization:acme', destroyedAt: '2026-12-02T11:00:00.000Z' };
    expect(await cipher.open(acme)).toEqual(erased);
    expect(await cipher.seal('organization:acme', RECIPIENT)).toEqual(erased);
    expect(await cipher.open(globex)).toEqual({ status: 'opened', value: { name: 'Globex' } });
  });

  it('when the store is read with another master key, then nothing opens: the store alone holds no usable key', async () => {
    const value = await sealed('account:acc_1');

    await expect(subjectCipher({ store, masterKey: randomBytes(32) }).open(value)).rejects.toEqual(
      new SealedValueError('wrong-master-key', 'account:acc_1'),
    );
    const stored = await store.read('account:acc_1');
    expect(stored?.state === 'active' && stored.wrappedKey).not.toContain(masterKey.toString('base64url'));
  });

  it('when a value has not the sealed shape, or its subject never had a key, then it is a SealedValueError, never another error', async () => {
    const cipher = subjectCipher({ store, masterKey });
    const value = await sealed('organization:acme');

    await expect(cipher.open({ ...value, v: 2 } as unknown as SealedValue)).rejects.toEqual(new SealedValueError('malformed'));
    await expect(cipher.open({ ...value, ciphertext: 'AA' })).rejects.toEqual(new SealedValueError('tampered', 'organization:acme'));
    await expect(cipher.open({ ...value, subject: 'organization:unknown' })).rejects.toEqual(
      new SealedValueError('no-key', 'organization:unknown'),
    );
  });
});

describe('subject cipher: the keys a process keeps opened', () => {
  let dir: string;
  let store: SubjectKeyStore;
  let reads: string[];
  const masterKey = randomBytes(32);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rsd-subject-cache-'));
    const sqlite = openSqliteSubjectKeyStore({ file: join(dir, 'subject-keys.db') });
    reads = [];
    // The store as the cipher sees it, each reading counted.
    store = {
      ...sqlite,
      getOrCreate: (subject, candidate) => (reads.push(`create ${subject}`), sqlite.getOrCreate(subject, candidate)),
      read: (subject) => (reads.push(`read ${subject}`), sqlite.read(subject)),
      destroy: (subject, at) => sqlite.destroy(subject, at),
      close: () => sqlite.close(),
    };
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('when a key is destroyed by another process, then this one stops opening with it after the TTL, or at once when it forgets it', async () => {
    let now = Date.parse('2026-12-02T10:00:00.000Z');
    const cipher = subjectCipher({ store, masterKey, now: () => new Date(now), cache: { ttlMs: 30_000 } });
    const acme = await cipher.seal('organization:acme', RECIPIENT);
    const globex = await cipher.seal('organization:globex', RECIPIENT);
    if (acme.status !== 'sealed' || globex.status !== 'sealed') throw new Error('not sealed');

    await store.destroy('organization:acme', '2026-12-02T10:00:01.000Z');
    await store.destroy('organization:globex', '2026-12-02T10:00:01.000Z');

    // Within the TTL the key opened before is used; the store was asked once per subject (a read, then the creation).
    expect(await cipher.open(acme.sealed)).toMatchObject({ status: 'opened' });
    expect(reads).toEqual(['read organization:acme', 'create organization:acme', 'read organization:globex', 'create organization:globex']);
    cipher.forget('organization:globex');
    expect(await cipher.open(globex.sealed)).toMatchObject({ status: 'erased', subject: 'organization:globex' });
    now += 30_000;
    expect(await cipher.open(acme.sealed)).toMatchObject({ status: 'erased', subject: 'organization:acme' });
  });

  it('when a subject that has its key is sealed with nothing kept, then the store is read, not written', async () => {
    await subjectCipher({ store, masterKey }).seal('organization:acme', RECIPIENT);
    reads.length = 0;
    // Another process (or this one past the TTL): its first seal for the subject.
    const outcome = await subjectCipher({ store, masterKey }).seal('organization:acme', RECIPIENT);
    expect(outcome.status).toBe('sealed');
    expect(reads).toEqual(['read organization:acme']);
  });

  it('when a subject is forgotten while its key is being read, then that reading is not kept: the next opening reads the store again', async () => {
    const outcome = await subjectCipher({ store, masterKey }).seal('organization:acme', RECIPIENT);
    if (outcome.status !== 'sealed') throw new Error('not sealed');
    let release: () => void = () => undefined;
    let readDone: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const wasRead = new Promise<void>((resolve) => (readDone = resolve));
    // The store answers the key it read before the destruction, but only once the erasure was seen.
    const slow: SubjectKeyStore = {
      ...store,
      read: async (subject) => {
        const key = await store.read(subject);
        readDone();
        await held;
        return key;
      },
    };
    const cipher = subjectCipher({ store: slow, masterKey });
    const first = cipher.open(outcome.sealed);
    await wasRead;

    await store.destroy('organization:acme', '2026-12-02T10:00:01.000Z');
    cipher.forget('organization:acme');
    release();

    expect(await first).toMatchObject({ status: 'opened' });
    expect(await cipher.open(outcome.sealed)).toMatchObject({ status: 'erased', subject: 'organization:acme' });
  });

  it('when many values of one subject are sealed and opened at once, then each cipher asks the store once', async () => {
    const cipher = subjectCipher({ store, masterKey });

    const sealed = await Promise.all(Array.from({ length: 20 }, (_, n) => cipher.seal('organization:busy', n)));
    const other = subjectCipher({ store, masterKey });
    await Promise.all(sealed.flatMap((outcome) => (outcome.status === 'sealed' ? [other.open(outcome.sealed)] : [])));

    expect(reads).toEqual(['read organization:busy', 'create organization:busy', 'read organization:busy']);
  });

  it('when values of a subject that has no key are opened again and again (a replayed log), then the store is read once', async () => {
    const sealed = await subjectCipher({ store, masterKey }).seal('organization:gone', 1);
    if (sealed.status !== 'sealed') throw new Error('not sealed');
    const elsewhere = { ...sealed.sealed, subject: 'organization:elsewhere' };
    const cipher = subjectCipher({ store, masterKey });
    reads = [];

    for (let n = 0; n < 3; n += 1)
      await expect(cipher.open(elsewhere)).rejects.toEqual(new SealedValueError('no-key', 'organization:elsewhere'));

    expect(reads).toEqual(['read organization:elsewhere']);
  });

  it('when more subjects are used than it keeps, then the least recently used is read from the store again', async () => {
    const cipher = subjectCipher({ store, masterKey, cache: { size: 2 } });
    const a = await cipher.seal('account:a', 1);
    const b = await cipher.seal('account:b', 1);
    const c = await cipher.seal('account:c', 1);
    if (a.status !== 'sealed' || b.status !== 'sealed' || c.status !== 'sealed') throw new Error('not sealed');
    reads = [];

    await cipher.open(b.sealed);
    await cipher.open(c.sealed);
    await cipher.open(a.sealed);

    expect(reads).toEqual(['read account:a']);
  });
});

describe('subject keys master key', () => {
  const key = randomBytes(32).toString('base64');

  it('when it is set, or in the file its _FILE names, then it is the 32 bytes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rsd-master-key-'));
    await writeFile(join(dir, 'key'), `${key}\n`);

    expect(subjectKeysMasterKey({ SUBJECT_KEYS_MASTER_KEY: key }).toString('base64')).toBe(key);
    expect(subjectKeysMasterKey({ SUBJECT_KEYS_MASTER_KEY_FILE: join(dir, 'key') }).toString('base64')).toBe(key);
    await rm(dir, { recursive: true, force: true });
  });

  it('when it is missing or not 32 bytes of base64, then a configuration error names the variable, never the value', () => {
    for (const env of [{}, { SUBJECT_KEYS_MASTER_KEY: randomBytes(16).toString('base64') }, { SUBJECT_KEYS_MASTER_KEY: `${key}!` }]) {
      let error: unknown;
      try {
        subjectKeysMasterKey(env);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain('SUBJECT_KEYS_MASTER_KEY');
      expect((error as ConfigError).message).not.toContain(Object.values(env)[0] ?? '\u0000');
    }
  });
});
