import { join } from 'node:path';
import { aSealedDataDirectory, TEST_SUBJECT_KEYS_MASTER_KEY } from '../../../libs/embedded/src/testing/sealed-data-directory';
import { aTempDirectoryPerTest } from '../../../libs/embedded/src/testing/temp-database';
import { runRsd, type CliOutcome } from '../../../test/support/rsd-cli';
import { runBackupCommand } from './backup';
import { UsageError } from './score-file';

/** What is done is @rsd/embedded's (its own tests, and test/e2e/backup-restore): here, how the commands are called. */
describe('rsd backup and rsd restore: how they are called', () => {
  const context = { env: {}, note: () => undefined };
  const restoreOnly =
    /--force, --without-webhook-key, --subject-keys and --without-subject-keys are options of rsd restore \(a backup is never written over a file\)/;

  it.each([
    ['backup', [], {}, /rsd backup takes one FILE, the backup's new file/],
    ['backup', ['one.tar', 'two.tar'], {}, /rsd backup takes one FILE/],
    ['backup', ['backup.tar'], { force: true }, restoreOnly],
    ['backup', ['backup.tar'], { 'subject-keys': 'data/subject-keys.db' }, restoreOnly],
    ['restore', ['backup.tar'], {}, /rsd restore needs --data-dir DIR/],
    [
      'restore',
      [],
      { 'data-dir': 'data' },
      /rsd restore takes one FILE, the backup's file \(or the directory of a backup made by an earlier version\)/,
    ],
  ] as const)('when rsd %s is given %j %j, then it is a usage error (exit 2)', async (command, args, options, message) => {
    const called = runBackupCommand(command, args, options, context);
    await expect(called).rejects.toThrow(UsageError);
    await expect(called).rejects.toThrow(message);
  });

  // The real bin (as the drill runs it): @rsd/embedded and @rsd/platform are loaded with import(), which jest does not do.
  describe('the subjects’ keys, which no backup carries (decision 56)', () => {
    const temp = aTempDirectoryPerTest('cli-backup');
    let dataDir: string;
    let backup: string;
    let backedUp: CliOutcome;

    beforeEach(async () => {
      dataDir = join(temp.dir, 'data');
      backup = join(temp.dir, 'backup.tar');
      await aSealedDataDirectory(dataDir, ['org-a']);
      backedUp = await runRsd(['backup', backup, '--data-dir', dataDir]);
    });

    it('when a backup is made, then its note names the master key among the keys to keep apart, and the key store as restored with it', () => {
      expect(backedUp.code).toBe(0);
      expect(backedUp.stderr).toMatch(
        /keep a copy of .*webhook-secret-key, .*data\/subject-keys-master\.key, .*response-signing-keys\.json/,
      );
      expect(backedUp.stderr).toMatch(
        /Nor is the subjects' key store .*data\/subject-keys\.db: it is restored with the backup it belongs to \(rsd restore .*backup\.tar --data-dir DIR --subject-keys .*data\/subject-keys\.db/,
      );
    });

    it('when the backup is restored without the keys, then it is refused (exit 1); with the configured master key and --subject-keys, restored', async () => {
      const target = join(temp.dir, 'restored');
      const refused = await runRsd(['restore', backup, '--data-dir', target]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/The master key is neither in .*restored\/subject-keys-master\.key nor in SUBJECT_KEYS_MASTER_KEY/);

      const restored = await runRsd(['restore', backup, '--data-dir', target, '--subject-keys', join(dataDir, 'subject-keys.db')], {
        SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY.toString('base64'),
      });

      expect(restored.code).toBe(0);
      expect(JSON.parse(restored.stdout)).toMatchObject({ subjectKeys: 'opens', subjectKeyStore: join(target, 'subject-keys.db') });
      expect(restored.stderr).not.toMatch(/WITHOUT/);
    });

    it('when --without-subject-keys is given, then it restores and says what the product will not open', async () => {
      const restored = await runRsd(['restore', backup, '--data-dir', join(temp.dir, 'restored'), '--without-subject-keys']);

      expect(restored.code).toBe(0);
      expect(JSON.parse(restored.stdout)).toMatchObject({ subjectKeys: 'missing' });
      expect(restored.stderr).toMatch(/restored WITHOUT the subjects' keys: .*dead-letters every sealed event they had not read/);
    });
  });
});
