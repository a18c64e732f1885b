import { domainEventSchema, SEALED_ATTRIBUTE, topicOf } from '@rsd/contracts';
import type { EventRecord, ParsedRecord } from '@rsd/ports';

/**
 * A record as an event, or why it is not one: not JSON, not a valid event, or an event on a topic it
 * does not belong to. Anyone with access to a topic can write to it, so every consumer checks, once
 * per record: a log that already parsed it hands its answer along (`EventRecord.parsed`), as the log
 * that opens sealed events (decision 56, `sealingEventLog`) does for every record.
 */
export function parseRecord(record: EventRecord): ParsedRecord {
  if (record.parsed) return record.parsed;
  let json: unknown;
  try {
    json = JSON.parse(record.value);
  } catch {
    return { reason: 'the value is not JSON' };
  }
  if (typeof json === 'object' && json !== null && SEALED_ATTRIBUTE in json) {
    return { reason: 'a sealed event, read past the log that opens it' };
  }
  return parseEvent(json, record.topic);
}

/** A JSON value (a record's, or a sealed one's once opened) as an event of `topic`, or why it is not one. */
export function parseEvent(json: unknown, topic: string): ParsedRecord {
  const result = domainEventSchema.safeParse(json);
  if (!result.success) {
    const problems = result.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(event)'}: ${issue.message}`);
    return { reason: `not a valid event: ${problems.join('; ')}` };
  }
  if (topicOf(result.data) !== topic) {
    return { reason: `a ${result.data.type} event does not belong on ${topic}` };
  }
  return { event: result.data };
}
