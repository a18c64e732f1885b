import { domainEventSchema, topicOf } from '@rsd/contracts';
import type { EventRecord, ParsedRecord } from '@rsd/ports';

/**
 * A record as an event, or why it is not one: not JSON, not a valid event, or an event on a topic it
 * does not belong to. Anyone with access to a topic can write to it, so every consumer checks, once
 * per record: a log that already parsed it hands its answer along (`EventRecord.parsed`).
 */
export function parseRecord(record: EventRecord): ParsedRecord {
  if (record.parsed) return record.parsed;
  let json: unknown;
  try {
    json = JSON.parse(record.value);
  } catch {
    return { reason: 'the value is not JSON' };
  }
  const result = domainEventSchema.safeParse(json);
  if (!result.success) {
    const problems = result.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(event)'}: ${issue.message}`);
    return { reason: `not a valid event: ${problems.join('; ')}` };
  }
  if (topicOf(result.data) !== record.topic) {
    return { reason: `a ${result.data.type} event does not belong on ${record.topic}` };
  }
  return { event: result.data };
}
