import {
  EVENT_SEALING,
  EVENT_TYPES,
  SEALED_ATTRIBUTE,
  SEALED_EVENT_VERSION,
  SEALED_MEMBER,
  openableSubjectsOf,
  sealedSubjectOf,
  type SealedSubjectKind,
} from '@rsd/contracts';
import type { EventLog, EventRecord, OutgoingRecord, ParsedRecord, SubscribeOptions } from '@rsd/ports';
import { parseEvent } from './parse-record';

/** A value sealed for one subject (libs/platform's subject cipher's format). */
export interface SealedPart {
  v: number;
  subject: string;
  nonce: string;
  ciphertext: string;
}

/** A part that could not be sealed because its subject was already erased: nothing of it is written. */
export interface ErasedPart {
  subject: string;
  erased: true;
}

type Erased = { status: 'erased'; subject: string; destroyedAt: string };

/** What the log needs of decision 56's subject cipher (libs/platform's `subjectCipher`). */
export interface EventCipher {
  seal(subject: string, value: unknown): Promise<{ status: 'sealed'; sealed: SealedPart } | Erased>;
  /** The same for a value given as its JSON text. */
  sealJson(subject: string, json: string): Promise<{ status: 'sealed'; sealed: SealedPart } | Erased>;
  open(sealed: SealedPart): Promise<{ status: 'opened'; value: unknown } | Erased>;
  /** Drops the subject's key kept in memory: it is read again from the key store at the next use. */
  forget(subject: string): void;
}

/** An event of a declared type that names no subject for fields it holds: it cannot be sealed (nor written to a sealed log). */
export class UnsealableEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsealableEventError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const KINDS: readonly SealedSubjectKind[] = ['organization', 'recipient'];

/** One subject's values sealed as one part, or the part that says its subject was already erased. */
export async function sealPart(cipher: Pick<EventCipher, 'seal'>, subject: string, value: unknown): Promise<SealedPart | ErasedPart> {
  return partOf(subject, await cipher.seal(subject, value));
}

/** The same for values given as their JSON text. */
export async function sealJsonPart(cipher: Pick<EventCipher, 'sealJson'>, subject: string, json: string): Promise<SealedPart | ErasedPart> {
  return partOf(subject, await cipher.sealJson(subject, json));
}

const partOf = (subject: string, outcome: Awaited<ReturnType<EventCipher['seal']>>): SealedPart | ErasedPart =>
  outcome.status === 'sealed' ? outcome.sealed : { subject, erased: true };

/** A part as read: its value, its subject erased, or why else it does not open (no key, no content named). */
export type OpenedPart = { status: 'opened'; value: unknown } | { status: 'erased' } | { status: 'invalid'; reason: string };

/**
 * Opens one part as a log's reader does (decision 56): an erased subject is an answer, and so is a part
 * that cannot be opened for another reason (tampered, no key, wrong master key: the cipher's typed error);
 * anything else (a key store that does not answer) throws, so that the record is tried again.
 */
export async function openPart(cipher: Pick<EventCipher, 'open'>, part: unknown): Promise<OpenedPart> {
  if (isObject(part) && part.erased === true) return { status: 'erased' };
  try {
    return await cipher.open(part as SealedPart);
  } catch (error) {
    if (error instanceof Error && error.name === 'SealedValueError') return { status: 'invalid', reason: error.message };
    throw error;
  }
}

/** The fields the declaration seals for one kind of subject. */
function fieldsOf(type: string, kind: SealedSubjectKind): readonly string[] {
  const declaration = EVENT_SEALING[type];
  if (!declaration) return [];
  return kind === 'organization' ? declaration.organization : Object.keys(declaration.recipient);
}

/**
 * The value as it is written to the log (decision 56): an event of a declared type gets its declared
 * fields sealed, one sealed part per subject in `data.sealed`, and the `rsdsealed` attribute with the
 * format's version; anything else (a dead letter, an event with nothing to seal) is written as it is.
 * A subject already erased seals nothing: its fields are left out, and its part says so.
 */
export async function sealValue(value: string, cipher: EventCipher): Promise<string> {
  if (!value.startsWith('{')) return value;
  let event: unknown;
  try {
    event = JSON.parse(value);
  } catch {
    return value;
  }
  if (!isObject(event) || typeof event.type !== 'string' || !isObject(event.data) || SEALED_ATTRIBUTE in event) return value;
  const data: Record<string, unknown> = { ...event.data };
  const parts: (SealedPart | ErasedPart)[] = [];
  for (const kind of KINDS) {
    const present = fieldsOf(event.type, kind).filter((field) => Object.hasOwn(data, field));
    if (present.length === 0) continue;
    const subject = sealedSubjectOf(kind, data);
    if (!subject) throw new UnsealableEventError(`a ${event.type} event names no ${kind} to seal its fields for`);
    const fields = Object.fromEntries(present.map((field) => [field, data[field]]));
    for (const field of present) delete data[field];
    parts.push(await sealPart(cipher, subject, fields));
  }
  if (parts.length === 0) return value;
  return JSON.stringify({ ...event, [SEALED_ATTRIBUTE]: SEALED_EVENT_VERSION, data: { ...data, [SEALED_MEMBER]: parts } });
}

/** A record read from the log: its event with the sealed fields opened, or why not; the opened value for other readers. */
export interface OpenedRecord {
  parsed: ParsedRecord;
  opened?: string;
  /** An erasure event's subjects, whose keys the cipher just forgot: a cache of opened records must forget them too. */
  forgot?: string[];
}

/**
 * A record as its consumers read it: a sealed event's parts opened with their subjects' keys and put
 * back, then parsed as any record. An erased organization's event answers `erased` (passed by); an
 * erased recipient's fields come back at their declared erased form, the event naming the subject.
 * A part that cannot be opened for another reason (tampered, no key) makes the record invalid; a key
 * store that cannot be reached throws (the consumer tries again). An erasure event (plaintext) makes
 * the cipher forget the erased subject's key at once.
 */
export async function openRecord(record: Pick<EventRecord, 'topic' | 'value'>, cipher: EventCipher): Promise<OpenedRecord> {
  let json: unknown;
  try {
    json = JSON.parse(record.value);
  } catch {
    return { parsed: { reason: 'the value is not JSON' } };
  }
  if (!isObject(json) || !(SEALED_ATTRIBUTE in json)) {
    const forgot = erasedSubjectsOf(json);
    for (const subject of forgot) cipher.forget(subject);
    return { parsed: parseEvent(json, record.topic), ...(forgot.length > 0 ? { forgot } : {}) };
  }
  if (json[SEALED_ATTRIBUTE] !== SEALED_EVENT_VERSION) return { parsed: { reason: `sealed in an unknown version` } };
  const { type, id, data } = json;
  const parts = isObject(data) ? data[SEALED_MEMBER] : undefined;
  if (typeof type !== 'string' || !EVENT_SEALING[type] || !isObject(data) || !Array.isArray(parts)) {
    return { parsed: { reason: 'a sealed event of no known type or shape' } };
  }
  const { [SEALED_MEMBER]: _sealed, ...plain } = data;
  const erasedSubjects: string[] = [];
  for (const part of parts as unknown[]) {
    const subject = isObject(part) ? part.subject : undefined;
    const kind = KINDS.find((candidate) => typeof subject === 'string' && openableSubjectsOf(candidate, plain).includes(subject));
    if (!kind || typeof subject !== 'string') return { parsed: { reason: 'a sealed part for a subject the event does not name' } };
    const outcome = await openPart(cipher, part);
    if (outcome.status === 'invalid') return { parsed: { reason: outcome.reason } };
    if (outcome.status === 'erased') {
      if (kind === 'organization') return { parsed: { erased: { type, id: typeof id === 'string' ? id : '', subject } } };
      erasedSubjects.push(subject);
      for (const [field, form] of Object.entries(EVENT_SEALING[type].recipient)) if (form === null) plain[field] = null;
      continue;
    }
    const fields = outcome.value;
    const allowed = fieldsOf(type, kind);
    if (!isObject(fields) || Object.keys(fields).some((field) => !allowed.includes(field))) {
      return { parsed: { reason: `a sealed part holds fields its ${kind} does not seal` } };
    }
    Object.assign(plain, fields);
  }
  const { [SEALED_ATTRIBUTE]: _version, ...envelope } = json;
  const event = { ...envelope, data: plain };
  const parsed = parseEvent(event, record.topic);
  if ('event' in parsed) return { parsed: erasedSubjects.length > 0 ? { ...parsed, erasedSubjects } : parsed };
  // Not one of the domain's events (the notifier's webhook changes): its readers parse the opened value.
  return { parsed, opened: JSON.stringify(event) };
}

/**
 * The subjects whose keys decision 56's erasure events say were destroyed: this process stops using
 * them now. A recipient's erasure destroys its subject (an account's or a grant's) and the grant's own
 * in every case (the events that do not name the account seal under the grant).
 */
function erasedSubjectsOf(json: unknown): string[] {
  if (!isObject(json) || !isObject(json.data)) return [];
  const { data } = json;
  const subjects = (...candidates: unknown[]) => candidates.filter((subject): subject is string => typeof subject === 'string');
  if (json.type === EVENT_TYPES.organizationOffboarded) return subjects(sealedSubjectOf('organization', data));
  if (json.type === EVENT_TYPES.recipientErased) {
    return [...new Set(subjects(data.subject, sealedSubjectOf('recipient', { clientId: data.clientId })))];
  }
  return [];
}

/** A record with the log's answer for it: a record another log layer already opened is kept as it is. */
export async function openedRecord(record: EventRecord, cipher: EventCipher): Promise<EventRecord> {
  if (record.parsed) return record;
  const { parsed, opened } = await openRecord(record, cipher);
  return { ...record, parsed, ...(opened === undefined ? {} : { opened }) };
}

/**
 * The event log as producers and consumers use it (decision 56): records are sealed as they are
 * appended, so the log (its topics, its file, their backups) holds the personal fields and each
 * organization's data only as ciphertext; and opened as they are delivered, so consumers handle
 * plain events. A log that opens its own records (the embedded one, once for all its subscriptions)
 * hands them on with their answer, which is kept.
 */
export function sealingEventLog(eventLog: EventLog, cipher: EventCipher): EventLog {
  const sealed = (records: readonly OutgoingRecord[]) =>
    Promise.all(records.map(async ({ key, value }) => ({ key, value: await sealValue(value, cipher) })));
  return {
    append: async (topic, records) => eventLog.append(topic, await sealed(records)),
    subscribe: (options: SubscribeOptions) =>
      eventLog.subscribe({
        ...options,
        handle: async (record) => options.handle(await openedRecord(record, cipher)),
        ...(options.handleBatch
          ? {
              handleBatch: async (records: readonly EventRecord[]) =>
                options.handleBatch!(await Promise.all(records.map((record) => openedRecord(record, cipher)))),
            }
          : {}),
      }),
    close: () => eventLog.close(),
  };
}
