import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { partitionKeyOf, topicOf, TOPICS } from '@rsd/contracts';
import * as embeddedAdapters from '@rsd/embedded';
import { createLogger } from '@rsd/platform';
import type { ParsedRecord } from '@rsd/ports';
import { aFixturePerTest, authorizationCreatedEvent, scoreCalculatedEvent } from '@rsd/testkit';
import { embeddedRuntime, type OpenedRuntime } from './open-runtime';

const log = createLogger('subject-keys', 'silent');
const OLD = Buffer.alloc(32, 21);
const NEW = Buffer.alloc(32, 22);

describe("the master key's rotation, as the product reads its log (decision 56)", () => {
  const opened: OpenedRuntime[] = [];
  afterEach(async () => {
    for (const runtime of opened.splice(0)) await runtime.close();
  });
  const temp = aFixturePerTest(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rsd-rotation-'));
    return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
  });

  /** The embedded product's runtime on the data directory with these master keys. */
  const product = async (subjectKeysMasterKey: Buffer, subjectKeysPreviousMasterKey?: Buffer) => {
    const runtime = await embeddedRuntime(
      embeddedAdapters,
      {
        DATA_DIR: temp.dir,
        READ_VIEWS_DB: 'read_views',
        NOTIFIER_DB: 'notifier',
        subjectKeysMasterKey,
        ...(subjectKeysPreviousMasterKey ? { subjectKeysPreviousMasterKey } : {}),
      },
      log,
    );
    opened.push(runtime);
    return runtime;
  };
  /** Every record of the log as the product's consumers are handed it: an event, or why it is not one. */
  const readLog = async (runtime: OpenedRuntime): Promise<string[]> => {
    const records: ParsedRecord[] = [];
    const subscription = await runtime.eventLog.subscribe({
      groupId: `reader-${randomUUID()}`,
      topics: [TOPICS.authorizations, TOPICS.scores],
      fromBeginning: true,
      ephemeral: true,
      handle: (record) => {
        records.push(record.parsed!);
        return Promise.resolve();
      },
    });
    await subscription.caughtUp;
    await subscription.close();
    return records.map((parsed) =>
      'event' in parsed
        ? `${parsed.event.type.split('.').slice(-2, -1)[0]} ${JSON.stringify(parsed.event.data).includes('Recipient of') ? 'named' : ''}`.trim()
        : 'reason' in parsed
          ? parsed.reason
          : 'erased',
    );
  };
  const rotate = (env: NodeJS.ProcessEnv) =>
    embeddedAdapters.runDataDirectorySubjectKeys({ command: 'rotate' }, { dataDir: temp.dir, env });

  it('when the store is rotated while the product runs on both keys, then a product with the new key alone reads every sealed value; before, it refused them', async () => {
    const writer = await product(OLD);
    for (const organizationId of ['acme', 'beta']) {
      const { event } = authorizationCreatedEvent({ organizationId });
      const grant = { ...event, data: { ...event.data, recipientName: `Recipient of ${organizationId}` } };
      for (const written of [grant, scoreCalculatedEvent({ organizationId })])
        await writer.eventLog.append(topicOf(written), [{ key: partitionKeyOf(written), value: JSON.stringify(written) }]);
    }
    const asWritten = await readLog(writer);
    expect(asWritten.sort()).toEqual(['calculated', 'calculated', 'created named', 'created named']);
    await writer.close();
    opened.length = 0;

    // The new key alone on an unrotated store: every sealed record is invalid, named so, never read as something else.
    const tooSoon = await product(NEW);
    expect(await readLog(tooSoon)).toEqual(Array.from({ length: 4 }, () => expect.stringMatching(/wrong-master-key/)));
    await tooSoon.close();
    opened.length = 0;

    // Both keys on the product (its rolling restart), then the rotation while it serves.
    const during = await product(NEW, OLD);
    expect((await readLog(during)).sort()).toEqual(asWritten.sort());
    const env = { SUBJECT_KEYS_MASTER_KEY: NEW.toString('base64'), SUBJECT_KEYS_PREVIOUS_MASTER_KEY: OLD.toString('base64') };
    expect(await rotate(env)).toMatchObject({ rewrapped: 4, alreadyCurrent: 0, destroyed: 0, changedMeanwhile: 0, erasuresReapplied: 0 });
    expect((await readLog(during)).sort()).toEqual(asWritten.sort());
    await during.close();
    opened.length = 0;

    const after = await product(NEW);
    expect((await readLog(after)).sort()).toEqual(asWritten.sort());
    // A new organization's key is made under the new key, which the rotation leaves as it is.
    const later = scoreCalculatedEvent({ organizationId: 'gamma' });
    await after.eventLog.append(topicOf(later), [{ key: partitionKeyOf(later), value: JSON.stringify(later) }]);
    expect(await rotate(env)).toMatchObject({ rewrapped: 0, alreadyCurrent: 5 });
  });
});
