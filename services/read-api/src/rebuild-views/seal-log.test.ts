import { join } from 'node:path';
import { credentialView, currentScoreView, READ_VIEWS } from '@rsd/domain';
import * as embeddedAdapters from '@rsd/embedded';
import { createLogger } from '@rsd/platform';
import { embeddedRuntime, type OpenedRuntime } from '@rsd/runtime';
import { aDataDirectoryWrittenInClear, clearEventsOf } from '../../../../libs/embedded/src/testing/clear-data-directory';
import { aTempDirectoryPerTest } from '../../../../libs/embedded/src/testing/temp-database';
import { rebuildViews } from './rebuild-views';

const log = createLogger('seal-log', 'silent');

describe('a log written before sealing, rewritten by rsd seal-log (decision 56), as the product reads it', () => {
  let runtime: OpenedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });
  const temp = aTempDirectoryPerTest('seal-log-views');
  const acme = clearEventsOf('acme', 'Clearwater Recipient Ltd', '192.0.2.96/28', '203.0.113.77');
  const globex = clearEventsOf('globex', 'Globex Harbour Recipient', '198.51.100.160/28', '203.0.113.201');

  /** What a product started on the directory serves of both organizations, from views rebuilt from the whole log. */
  const readsAfterRebuild = async (namespace: string) => {
    runtime = await embeddedRuntime(embeddedAdapters, { DATA_DIR: temp.dir, READ_VIEWS_DB: namespace, NOTIFIER_DB: 'notifier' }, log);
    await rebuildViews(runtime, log);
    const views = (await runtime.openViews('read-views', READ_VIEWS)).store;
    const reads = {
      acmeGrant: await views.get(credentialView, acme.grant.data.clientId),
      acmeScore: await views.get(currentScoreView, 'acme'),
      globexGrant: await views.get(credentialView, globex.grant.data.clientId),
      globexScore: await views.get(currentScoreView, 'globex'),
    };
    await runtime.close();
    runtime = undefined;
    return reads;
  };

  it('when the log is sealed, then the product serves the same reads; when the organization is offboarded after, then a rebuild holds nothing of it', async () => {
    await aDataDirectoryWrittenInClear(temp.dir, [acme, globex]);
    const before = await readsAfterRebuild('before');
    expect(before.acmeGrant).toMatchObject({ recipientName: 'Clearwater Recipient Ltd', allowedCidrs: ['192.0.2.96/28'] });
    expect(before.acmeScore).toMatchObject({ score: 83 });

    const report = await embeddedAdapters.sealEmbeddedLog({ dataDir: temp.dir });
    expect(report.topics['rsd.authorizations.v1']).toMatchObject({ sealed: 4 });

    expect(await readsAfterRebuild('after')).toEqual(before);

    // What the offboarding does to the log: the organization's key and its grant's destroyed.
    const keys = embeddedAdapters.openSqliteSubjectKeyStore({ file: join(temp.dir, embeddedAdapters.SUBJECT_KEYS_DATABASE) });
    for (const subject of ['organization:acme', `grant:${acme.grant.data.clientId}`]) await keys.destroy(subject, new Date().toISOString());
    await keys.close();

    const offboarded = await readsAfterRebuild('offboarded');
    expect(offboarded).toEqual({
      acmeGrant: undefined,
      acmeScore: undefined,
      globexGrant: before.globexGrant,
      globexScore: before.globexScore,
    });
  });
});
