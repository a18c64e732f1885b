import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AccessRecord } from '@rsd/contracts';
import { openSqliteSubjectKeyStore } from '@rsd/embedded';
import { subjectCipher, type SealedValue } from '@rsd/platform';
import type { SubjectKeyStore } from '@rsd/ports';
import { anAccessRecord, aStoreInATempDirectoryPerTest } from '@rsd/testkit';
import { openAccessRecords, sealAccessRecords } from './sealed-access-records';

const ACME = 'rs_ACMEACMEACMEACMEACMEACME';
const GLOBEX = 'rs_GLOBEXGLOBEXGLOBEXGLOBEX';
const ADDRESSES = { [ACME]: '198.51.100.23', [GLOBEX]: '2001:db8::7' };
const ERASED_AT = '2026-12-03T07:00:00.000Z';

interface SealedMessage {
  records: Partial<AccessRecord>[];
  rsdsealed: number;
  sealed: (SealedValue | { subject: string; erased: true })[];
}

describe('sealed access records (decision 56, the access-log topic)', () => {
  const store: SubjectKeyStore = aStoreInATempDirectoryPerTest('sealed-access-records', (dir) =>
    openSqliteSubjectKeyStore({ file: join(dir, 'subject-keys.db') }),
  );
  const masterKey = randomBytes(32);
  const aCipher = () => subjectCipher({ store, masterKey });
  /** Three reads of Acme's grant, two of Globex's, one without an address (a proxy's header that was no address). */
  const aBatch = (): AccessRecord[] => [
    anAccessRecord(ACME, 5_000, { clientAddress: ADDRESSES[ACME] }),
    anAccessRecord(GLOBEX, 4_000, { clientAddress: ADDRESSES[GLOBEX], status: 429, code: 'RATE_LIMITED' }),
    anAccessRecord(ACME, 3_000, { clientAddress: ADDRESSES[ACME] }),
    anAccessRecord(ACME, 2_000, { clientAddress: null }),
    anAccessRecord(GLOBEX, 1_000, {
      clientAddress: '192.0.2.9',
      resource: 'certificate',
      certificate: { asOf: '2026-12-01', format: 'pdf' },
    }),
    anAccessRecord(ACME, 0, { clientAddress: '203.0.113.77' }),
  ];
  const erase = async (clientId: string, cipher: ReturnType<typeof aCipher>) => {
    await store.destroy(`grant:${clientId}`, ERASED_AT);
    cipher.forget(`grant:${clientId}`);
  };

  it('when a batch is sealed, then no address is in it, one part per grant holds them, and it opens to the same records', async () => {
    const cipher = aCipher();
    const seal = jest.spyOn(cipher, 'sealJson');
    const records = aBatch();

    const value = await sealAccessRecords(records, cipher);

    expect(value).not.toMatch(/198\.51\.100|2001:db8|192\.0\.2|203\.0\.113|clientAddress":"/);
    expect(value.startsWith('{"records":[{')).toBe(true);
    const message = JSON.parse(value) as SealedMessage;
    expect(message.rsdsealed).toBe(1);
    expect(message.sealed.map((part) => part.subject)).toEqual([`grant:${ACME}`, `grant:${GLOBEX}`]);
    // One sealing per grant, not per record; the read without an address stays null in clear.
    expect(seal).toHaveBeenCalledTimes(2);
    expect(message.records.map((record) => record.clientAddress)).toEqual([undefined, undefined, undefined, null, undefined, undefined]);
    expect(await openAccessRecords(value, cipher)).toEqual({ records });
    // Another process with the same key store and master key opens it too (the credentials service).
    expect(await openAccessRecords(value, aCipher())).toEqual({ records });
  });

  it("when a grant's key is destroyed, then its records read with a null address and stay; the other grant's still open", async () => {
    const cipher = aCipher();
    const records = aBatch();
    const value = await sealAccessRecords(records, cipher);

    await erase(ACME, cipher);

    const opened = await openAccessRecords(value, cipher);
    expect(opened).toEqual({
      records: records.map((record) => (record.clientId === ACME ? { ...record, clientAddress: null } : record)),
    });
  });

  it('when a batch is sealed after its grant was erased, then nothing of its addresses is written, and they read as null', async () => {
    const cipher = aCipher();
    await sealAccessRecords(aBatch(), cipher);
    await erase(GLOBEX, cipher);
    const records = aBatch();

    const value = await sealAccessRecords(records, cipher);

    expect(value).not.toMatch(/2001:db8|192\.0\.2/);
    expect((JSON.parse(value) as SealedMessage).sealed[1]).toEqual({ subject: `grant:${GLOBEX}`, erased: true });
    expect(await openAccessRecords(value, cipher)).toEqual({
      records: records.map((record) => (record.clientId === GLOBEX ? { ...record, clientAddress: null } : record)),
    });
  });

  it('when a batch has no address, or was written before sealing, then it is written and read as it is', async () => {
    const cipher = aCipher();
    const seal = jest.spyOn(cipher, 'sealJson');
    const withoutAddresses = [anAccessRecord(ACME, 1_000, { clientAddress: null })];
    const clear = aBatch();

    const value = await sealAccessRecords(withoutAddresses, cipher);

    expect(value).toBe(JSON.stringify({ records: withoutAddresses }));
    expect(seal).not.toHaveBeenCalled();
    expect(await openAccessRecords(JSON.stringify({ records: clear }), cipher)).toEqual({ records: clear });
  });

  it('when a sealed part is changed, moved to another grant, or its records changed, then the message answers why and no address', async () => {
    const cipher = aCipher();
    const value = JSON.parse(await sealAccessRecords(aBatch(), cipher)) as SealedMessage;
    const change = (edit: (message: SealedMessage) => void) => {
      const copy = structuredClone(value);
      edit(copy);
      return openAccessRecords(JSON.stringify(copy), cipher);
    };
    const acmePart = (message: SealedMessage) => message.sealed[0] as SealedValue;

    expect(await change((m) => (acmePart(m).ciphertext = `A${acmePart(m).ciphertext.slice(1)}`))).toEqual({
      reason: `sealed value cannot be opened (tampered, subject grant:${ACME})`,
    });
    // The subject is authenticated with the ciphertext: Acme's addresses do not open as another grant's.
    expect(
      await change((m) => {
        acmePart(m).subject = `grant:${GLOBEX}`;
        m.sealed[1]!.subject = `grant:${ACME}`;
      }),
    ).toEqual({ reason: `sealed value cannot be opened (tampered, subject grant:${GLOBEX})` });
    expect(await change((m) => (m.records[0]!.clientId = GLOBEX))).toEqual({
      reason: "a sealed part holds other addresses than its grant's records",
    });
    expect(await change((m) => m.sealed.pop())).toEqual({
      reason: 'the sealed parts do not match the grants of the records without an address',
    });
    expect(await change((m) => (m.rsdsealed = 2))).toEqual({ reason: 'sealed in an unknown version' });
    expect(await change((m) => (m.records[1]!.status = '429' as unknown as number))).toEqual({
      reason: 'not a sealed batch of access records',
    });
    expect(await openAccessRecords('{"records": [', cipher)).toEqual({ reason: 'the value is not JSON' });
    expect(await openAccessRecords('{"records": []}', cipher)).toEqual({ reason: 'not a batch of access records' });
  });

  it('when the key store does not answer, then opening throws (the message is tried again), never answers erased or null', async () => {
    const value = await sealAccessRecords(aBatch(), aCipher());
    const away: SubjectKeyStore = {
      getOrCreate: () => Promise.reject(new Error('MongoDB is away')),
      read: () => Promise.reject(new Error('MongoDB is away')),
      destroy: () => Promise.reject(new Error('MongoDB is away')),
      list: () => Promise.reject(new Error('MongoDB is away')),
      rewrap: () => Promise.reject(new Error('MongoDB is away')),
      close: () => Promise.resolve(),
    };

    await expect(openAccessRecords(value, subjectCipher({ store: away, masterKey }))).rejects.toThrow('MongoDB is away');
  });
});
