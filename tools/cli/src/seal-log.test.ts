import { join } from 'node:path';
import { openEmbeddedDatabase } from '../../../libs/embedded/src/sqlite/database';
import { aDataDirectoryWrittenInClear, clearEventsOf } from '../../../libs/embedded/src/testing/clear-data-directory';
import { aTempDirectoryPerTest } from '../../../libs/embedded/src/testing/temp-database';
import { runRsd } from '../../../test/support/rsd-cli';

/** What is done is @rsd/embedded's (seal-log.test.ts): here, the real bin as an operator runs it. */
describe('rsd seal-log: how it is called', () => {
  const temp = aTempDirectoryPerTest('cli-seal-log');

  it('when the product is stopped, then it prints its report as JSON (exit 0); while the directory is open, it is refused (exit 1)', async () => {
    const dataDir = join(temp.dir, 'data');
    await aDataDirectoryWrittenInClear(dataDir, [clearEventsOf('acme', 'Clearwater Recipient Ltd', '192.0.2.96/28', '203.0.113.77')]);
    const running = openEmbeddedDatabase(join(dataDir, 'rsd.sqlite'));
    const refused = await runRsd(['seal-log', '--data-dir', dataDir]);
    await running.close();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is in use: .*Stop it before sealing its log/);

    const sealed = await runRsd(['seal-log'], { DATA_DIR: dataDir });

    expect(sealed.code).toBe(0);
    expect(JSON.parse(sealed.stdout)).toMatchObject({
      records: 4,
      topics: { 'rsd.authorizations.v1': { sealed: 2 }, 'rsd.scores.v1': { sealed: 1 } },
    });
    expect(sealed.stderr).toMatch(/rsd seal-log: 4 of 4 records read, 4 sealed|VACUUM/);
  });
});
