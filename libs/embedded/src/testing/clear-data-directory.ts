import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EVENT_TYPES, partitionKeyOf, topicOf, TOPICS, type DomainEvent } from '@rsd/contracts';
import { SUBJECT_KEYS_MASTER_KEY_SECRET } from '@rsd/platform';
import { anEvent, authorizationCreatedEvent, scoreCalculatedEvent } from '@rsd/testkit';
import { openSqliteEventLog } from '../sqlite/sqlite-event-log';
import { TEST_SUBJECT_KEYS_MASTER_KEY } from './sealed-data-directory';

/** One organization's events as a build before sealing wrote them, and what of them must not stay readable. */
export interface ClearOrganization {
  organizationId: string;
  grant: DomainEvent & { type: typeof EVENT_TYPES.authorizationCreated };
  /** The grant's API key, for reads. */
  apiKey: string;
  /** Its recipient's name, its allow list's address, the address an alert saw, its score's members. */
  readable: string[];
}

/**
 * An organization's grant (a recipient name, an allow list), an alert on it (the address seen), a
 * distinctive score, and a dead letter keeping a copy of the grant's event as it was written.
 */
export function clearEventsOf(
  organizationId: string,
  name: string,
  cidr: string,
  address: string,
): ClearOrganization & { events: DomainEvent[] } {
  const { event, apiKey } = authorizationCreatedEvent({ organizationId, allowedCidrs: [cidr] });
  const grant = { ...event, data: { ...event.data, recipientName: name } };
  const alerted = anEvent(
    EVENT_TYPES.authorizationAlerted,
    {
      clientId: grant.data.clientId,
      organizationId,
      alertId: `alr_${organizationId.replace(/\W/g, '').padEnd(16, '0')}`,
      alert: 'authorization.new_address',
      at: '2026-11-03T00:00:00.000Z',
      address,
      revision: 2,
    },
    { source: '/test/seal-log', time: new Date('2026-11-03T00:00:00.000Z') },
  );
  const score = scoreCalculatedEvent({ organizationId, score: 83, grade: 'Strengthen' });
  return {
    organizationId,
    grant,
    apiKey,
    events: [grant, alerted, score],
    readable: [name, cidr.split('/')[0]!, address, '"score":', '"pillarScores"'],
  };
}

/**
 * A data directory whose log was written before sealing (decision 56): each organization's events in
 * clear, written through the log without its sealing door (as an older build did), a dead letter of
 * the first grant as the read API wrote it, and the master key file the product of this version makes
 * at its first start (the test master key).
 */
export async function aDataDirectoryWrittenInClear(dataDir: string, organizations: readonly ClearOrganization[]): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const log = openSqliteEventLog({ file: join(dataDir, 'rsd.sqlite') });
  try {
    for (const organization of organizations) {
      for (const event of (organization as ClearOrganization & { events: DomainEvent[] }).events) {
        await log.append(topicOf(event), [{ key: partitionKeyOf(event), value: JSON.stringify(event) }]);
      }
    }
    const first = organizations[0];
    if (first) {
      const letter = {
        reason: 'an older rule refused it',
        topic: TOPICS.authorizations,
        partition: 0,
        offset: '1',
        key: first.organizationId,
      };
      await log.append(TOPICS.deadLetter, [
        { key: first.organizationId, value: JSON.stringify({ ...letter, value: JSON.stringify(first.grant) }) },
      ]);
    }
  } finally {
    await log.close();
  }
  await writeFile(join(dataDir, SUBJECT_KEYS_MASTER_KEY_SECRET.file), `${TEST_SUBJECT_KEYS_MASTER_KEY.toString('base64')}\n`, {
    mode: 0o600,
  });
}
