import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { aSealedDataDirectory } from '../../../libs/embedded/src/testing/sealed-data-directory';
import { aTempDirectoryPerTest } from '../../../libs/embedded/src/testing/temp-database';
import { runRsd } from '../../../test/support/rsd-cli';

/** What is done is @rsd/consumers' and @rsd/embedded's (their tests): here, the real bin as an operator calls it. */
describe('rsd subject-keys: how it is called (decision 56)', () => {
  const temp = aTempDirectoryPerTest('cli-subject-keys');

  it('when a backup is made and restored, then each answers a JSON report; a bad retention is refused naming the option, a refusal exits 1', async () => {
    const dataDir = join(temp.dir, 'data');
    const backups = join(temp.dir, 'key-backups');
    await aSealedDataDirectory(dataDir, ['org-a', 'org-b']);
    await mkdir(backups);

    const backedUp = await runRsd(['subject-keys', 'backup', '--data-dir', dataDir, '--to', backups]);
    expect(backedUp).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(backedUp.stdout) as { backup: string; keys: number; keepDays: number };
    expect(report).toMatchObject({ keys: 2, destroyed: 0, expired: [], keepDays: 35 });

    const restored = await runRsd(['subject-keys', 'restore', report.backup, '--data-dir', dataDir]);
    expect(restored.code).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ restored: 0, alreadyThere: 2, erasuresReapplied: 0 });

    const wrongDays = await runRsd(['subject-keys', 'backup', '--data-dir', dataDir, '--to', backups, '--keep-days', '365']);
    expect(wrongDays.code).toBe(1);
    expect(wrongDays.stderr).toContain('--keep-days: must be a whole number of days from 1 to 90');
    const noPrevious = await runRsd(['subject-keys', 'rotate', '--data-dir', dataDir], {
      SUBJECT_KEYS_MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
    });
    expect(noPrevious.code).toBe(1);
    expect(noPrevious.stderr).toMatch(/2 stored key\(s\) are wrapped by a master key that is neither SUBJECT_KEYS_MASTER_KEY/);
    const rotated = await runRsd(['subject-keys', 'rotate', '--data-dir', dataDir]);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ rewrapped: 0, alreadyCurrent: 2 });
  });
});
