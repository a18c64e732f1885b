import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { partitionKeyOf, topicOf, type DomainEvent } from '@rsd/contracts';
import { credentialView, currentScoreView, READ_VIEWS } from '@rsd/domain';
import * as embeddedAdapters from '@rsd/embedded';
import { createLogger } from '@rsd/platform';
import { embeddedRuntime, type OpenedRuntime } from '@rsd/runtime';
import { aFixturePerTest, authorizationCreatedEvent, scoreCalculatedEvent } from '@rsd/testkit';
import { rebuildViews } from './rebuild-views';

const log = createLogger('rebuild-views', 'silent');
/** A recipient account's id (`rcp_` and 24 letters or digits). */
const JANE = `rcp_${'J'.repeat(24)}`;

/** Two organizations' grants (a recipient's name and allow list each) and scores, as their producers write them. */
function eventsOf(organizationId: string, recipientName: string, cidr: string, score: number, recipientAccountId: string | null = null) {
  const { event } = authorizationCreatedEvent({ organizationId, allowedCidrs: [cidr] });
  const grant = { ...event, data: { ...event.data, recipientName, recipientAccountId } };
  return { grant, score: scoreCalculatedEvent({ organizationId, score, grade: 'Strengthen' }) };
}

describe('rebuild-views over the sealed log (decision 56)', () => {
  let runtime: OpenedRuntime | undefined;
  // Closed before its data directory is removed (hooks run in the order declared).
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });
  const temp = aFixturePerTest(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rsd-rebuild-sealed-'));
    return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
  });

  const open = async (READ_VIEWS_DB: string) => {
    runtime = await embeddedRuntime(embeddedAdapters, { DATA_DIR: temp.dir, READ_VIEWS_DB, NOTIFIER_DB: 'notifier' }, log);
    return runtime;
  };
  const append = async (opened: OpenedRuntime, events: DomainEvent[]) => {
    for (const event of events)
      await opened.eventLog.append(topicOf(event), [{ key: partitionKeyOf(event), value: JSON.stringify(event) }]);
  };
  /** The log's records as the file holds them. */
  const logValues = () => {
    const db = new DatabaseSync(join(temp.dir, 'rsd.sqlite'), { readOnly: true });
    try {
      return (db.prepare('SELECT value FROM events').all() as { value: string }[]).map((row) => row.value);
    } finally {
      db.close();
    }
  };
  const destroy = async (subject: string) => {
    const keys = embeddedAdapters.openSqliteSubjectKeyStore({ file: join(temp.dir, embeddedAdapters.SUBJECT_KEYS_DATABASE) });
    await keys.destroy(subject, new Date().toISOString());
    await keys.close();
  };

  it("when an organization's key is destroyed, then the log holds nothing readable of it and a rebuild holds nothing of it; the other is intact", async () => {
    const acme = eventsOf('acme', 'Acme Recipient Ltd', '192.0.2.0/28', 97);
    const globex = eventsOf('globex', 'Globex Recipient Ltd', '198.51.100.0/28', 41);
    await append(await open('rsd_read_views'), [acme.grant, acme.score, globex.grant, globex.score]);
    await runtime!.close();
    runtime = undefined;

    const values = logValues();
    expect(values).toHaveLength(4);
    for (const readable of ['Acme Recipient', '192.0.2.0', 'Globex Recipient', '198.51.100.0', '"score":', '"grade":', '"pillarScores"']) {
      expect(values.filter((value) => value.includes(readable))).toEqual([]);
    }

    await destroy('organization:acme');
    const rebuilt = await open('rebuilt');
    await rebuildViews(rebuilt, log);
    const views = (await rebuilt.openViews('read-views', READ_VIEWS)).store;

    expect(await views.get(credentialView, acme.grant.data.clientId)).toBeUndefined();
    expect(await views.get(currentScoreView, 'acme')).toBeUndefined();
    expect(await views.get(credentialView, globex.grant.data.clientId)).toMatchObject({
      recipientName: 'Globex Recipient Ltd',
      allowedCidrs: ['198.51.100.0/28'],
    });
    expect(await views.get(currentScoreView, 'globex')).toMatchObject({ score: 41 });
  });

  it("when a key is destroyed through the runtime's key store, then this process opens nothing more with it, before any erasure event is read", async () => {
    const acme = eventsOf('acme', 'Acme Recipient Ltd', '192.0.2.0/28', 97);
    const opened = await open('rebuilt');
    // Sealing them put the organization's key in the cipher's memory.
    await append(opened, [acme.grant, acme.score]);

    await (await opened.openSubjectKeyStore()).destroy('organization:acme', new Date().toISOString());
    await rebuildViews(opened, log);
    const views = (await opened.openViews('read-views', READ_VIEWS)).store;

    expect(await views.get(credentialView, acme.grant.data.clientId)).toBeUndefined();
    expect(await views.get(currentScoreView, 'acme')).toBeUndefined();
  });

  it("when a recipient's key is destroyed, then a rebuilt grant keeps working without its name", async () => {
    const jane = eventsOf('acme', 'Jane Roe', '203.0.113.0/28', 60, JANE);
    await append(await open('rsd_read_views'), [jane.grant]);
    await runtime!.close();
    runtime = undefined;

    // A grant an account holds: its recipient's name is the grant's.
    await destroy(`grant:${jane.grant.data.clientId}`);
    const rebuilt = await open('rebuilt');
    await rebuildViews(rebuilt, log);
    const views = (await rebuilt.openViews('read-views', READ_VIEWS)).store;

    expect(await views.get(credentialView, jane.grant.data.clientId)).toMatchObject({
      status: 'active',
      recipientName: null,
      keyDigest: jane.grant.data.keyDigest,
      allowedCidrs: ['203.0.113.0/28'],
    });
  });
});
