import { runBackupCommand } from './backup';
import { UsageError } from './score-file';

/** What is done is @rsd/embedded's (its own tests, and test/e2e/backup-restore): here, how the commands are called. */
describe('rsd backup and rsd restore: how they are called', () => {
  const context = { env: {}, note: () => undefined };

  it.each([
    ['backup', [], {}, /rsd backup takes one FILE, the backup's new file/],
    ['backup', ['one.tar', 'two.tar'], {}, /rsd backup takes one FILE/],
    [
      'backup',
      ['backup.tar'],
      { force: true },
      /--force and --without-webhook-key are options of rsd restore \(a backup is never written over a file\)/,
    ],
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
});
