import {
  accessRecordBatchSchema,
  sealedAccessRecordBatchSchema,
  sealedAddressesSchema,
  SEALED_ATTRIBUTE,
  SEALED_EVENT_VERSION,
  SEALED_MEMBER,
  type AccessRecord,
  type SealedAccessRecordBatch,
} from '@rsd/contracts';
import { grantSubject } from '@rsd/domain';
import { openPart, sealJsonPart, type EventCipher } from './sealed-events';

/*
 * Decision 56 on the access log's own topic (distributed runtime): a read's client address is its
 * recipient's, sealed under the grant's key (`grant:<clientId>`, which a recipient's erasure and the
 * organization's offboarding both destroy), so that an erasure reaches the topic's copies before its
 * retention does. The rest of a record (when, what, the status, the request id) is the organization's
 * record of reads and stays in clear, as the entry stays in the store once its address is erased.
 */

type SealedRecord = SealedAccessRecordBatch['records'][number];

/** The subject a record's address is sealed for: its grant's, the one the grant's erasure and its organization's offboarding destroy. */
const subjectOf = (record: { clientId: string }): string => grantSubject(record.clientId);

/**
 * The message a batch is published as: each address taken out of its record and sealed with the others
 * of its grant, one AES-GCM sealing per grant per batch (the key from the cipher's cache). A batch
 * without an address has nothing to seal and is written as it was before sealing.
 */
export async function sealAccessRecords(records: readonly AccessRecord[], cipher: Pick<EventCipher, 'sealJson'>): Promise<string> {
  // By Client ID, each grant's subject named once per batch rather than once per record.
  const byClientId = new Map<string, string[]>();
  const written: SealedRecord[] = records.map((record) => {
    if (record.clientAddress === null) return record;
    const member = `${JSON.stringify(record.id)}:${JSON.stringify(record.clientAddress)}`;
    const members = byClientId.get(record.clientId);
    if (members) members.push(member);
    else byClientId.set(record.clientId, [member]);
    return withoutAddress(record);
  });
  if (byClientId.size === 0) return JSON.stringify({ records });
  // Each grant's addresses by record id, as the JSON text of that object: made as an object, every record id
  // (all of them new) would become a property name, which V8 interns, at more cost than the rest of the sealing.
  const parts = await Promise.all(
    [...byClientId].map(([clientId, members]) => sealJsonPart(cipher, subjectOf({ clientId }), `{${members.join(',')}}`)),
  );
  return JSON.stringify({ records: written, [SEALED_ATTRIBUTE]: SEALED_EVENT_VERSION, [SEALED_MEMBER]: parts });
}

/**
 * The record as the topic holds it once its address is sealed: every field but the address, named one by
 * one (an object of one shape, where a rest copy walks the record's keys for every record of a batch).
 */
function withoutAddress({ id, clientId, at, resource, status, code, requestId, certificate }: AccessRecord): SealedRecord {
  return certificate === undefined
    ? { id, clientId, at, resource, status, code, requestId }
    : { id, clientId, at, resource, status, code, requestId, certificate };
}

/** A message of the topic as its readers take it: its records with their addresses, or why it is passed by. */
export type OpenedAccessRecords = { records: AccessRecord[] } | { reason: string };

/**
 * A message read back (decision 56): a sealed batch's parts opened and each address put back in its
 * record; a record whose grant is erased answers its address as null (the record stays: the organization
 * keeps its record of reads). A batch written before sealing reads as it is. A message that is no batch,
 * or a part that does not open for another reason than an erasure (tampered, no key, wrong master key),
 * answers a reason, and the whole message is passed by, as a sealed event that does not open is; a key
 * store that does not answer throws, and the message is tried again.
 */
export async function openAccessRecords(value: string, cipher: Pick<EventCipher, 'open'>): Promise<OpenedAccessRecords> {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { reason: 'the value is not JSON' };
  }
  if (typeof json !== 'object' || json === null || !(SEALED_ATTRIBUTE in json)) {
    const plain = accessRecordBatchSchema.safeParse(json);
    return plain.success ? { records: plain.data.records } : { reason: 'not a batch of access records' };
  }
  if (json[SEALED_ATTRIBUTE] !== SEALED_EVENT_VERSION) return { reason: 'sealed in an unknown version' };
  const batch = sealedAccessRecordBatchSchema.safeParse(json);
  if (!batch.success) return { reason: 'not a sealed batch of access records' };
  const { records, [SEALED_MEMBER]: parts } = batch.data;
  // Each grant's records written without an address, whose addresses its part must hold (no more, no fewer).
  const awaited = new Map<string, string[]>();
  for (const record of records) {
    if (record.clientAddress !== undefined) continue;
    const subject = subjectOf(record);
    const ids = awaited.get(subject);
    if (ids) ids.push(record.id);
    else awaited.set(subject, [record.id]);
  }
  if (parts.length !== awaited.size || parts.some(({ subject }) => !awaited.has(subject))) {
    return { reason: 'the sealed parts do not match the grants of the records without an address' };
  }
  const addresses = new Map<string, Record<string, string> | null>();
  for (const [part, outcome] of await Promise.all(parts.map(async (part) => [part, await openPart(cipher, part)] as const))) {
    if (outcome.status === 'invalid') return { reason: outcome.reason };
    if (outcome.status === 'erased') {
      addresses.set(part.subject, null);
      continue;
    }
    const held = sealedAddressesSchema.safeParse(outcome.value);
    const ids = awaited.get(part.subject)!;
    if (!held.success || Object.keys(held.data).length !== new Set(ids).size || ids.some((id) => !Object.hasOwn(held.data, id))) {
      return { reason: "a sealed part holds other addresses than its grant's records" };
    }
    addresses.set(part.subject, held.data);
  }
  return {
    records: records.map(({ clientAddress, ...record }) => ({
      ...record,
      // Erased (null), or the address its grant's part holds for it.
      clientAddress: clientAddress !== undefined ? clientAddress : (addresses.get(subjectOf(record))?.[record.id] ?? null),
    })),
  };
}
