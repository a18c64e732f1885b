import type { Command } from 'commander';
import { group, type Builders } from './cli';

/**
 * `rsd subject-keys` (decision 56), embedded runtime: the subject key store's own backups with their
 * expiry, their restore, and the master key's rotation, on a data directory (also while its product
 * serves). The distributed runtime runs the same work as `npm run subject-keys:*`. Each answers a
 * JSON report; a refusal is an error (exit 1).
 */
export function addSubjectKeyCommands(program: Command, { io: { env }, act }: Pick<Builders, 'io' | 'act'>): void {
  const keys = group(
    program,
    'subject-keys',
    "The embedded runtime's subject key store: its backups, their restore, the master key's rotation",
  );
  const run = async (
    maintenance: Parameters<typeof import('@rsd/embedded').runDataDirectorySubjectKeys>[0],
    options: Record<string, unknown>,
  ): Promise<unknown> => {
    const { runDataDirectorySubjectKeys } = await import('@rsd/embedded');
    return runDataDirectorySubjectKeys(maintenance, { dataDir: (options.dataDir as string | undefined) ?? env.DATA_DIR ?? '.data', env });
  };
  const dataDir = 'the data directory (DATA_DIR, default .data)';
  const retention = 'days a key-store backup is kept and restorable (default SUBJECT_KEYS_BACKUP_RETENTION_DAYS, else 35; 1–90)';

  keys
    .command('backup')
    .summary("A backup of the subject key store into --to DIR; deletes that directory's key-store backups older than the retention")
    .description(
      'Writes DIR/subject-keys-<instant>.jsonl (mode 0600: the wrapped keys and the tombstones, never a usable key nor the master key), ' +
        "then deletes DIR's key-store backups older than the retention, after which an erasure holds in every backup",
    )
    .requiredOption('--to <dir>', 'the directory of the key-store backups')
    .option('--data-dir <dir>', dataDir)
    .option('--keep-days <days>', retention)
    .action(
      act((options) => run({ command: 'backup', to: options.to as string, keepDays: options.keepDays as string | undefined }, options)),
    );

  keys
    .command('restore')
    .summary("Puts a key-store backup back into the data directory's key store, then applies again every erasure of its log")
    .description(
      'Into an empty key store, or merged into the current one: a destroyed subject stays destroyed, a key held stays; then every ' +
        "erasure of the data directory's log (organization.offboarded, recipient.erased) is applied again. Refuses a backup older than the retention",
    )
    .argument('<file>', 'the key-store backup (subject-keys-<instant>.jsonl)')
    .option('--data-dir <dir>', dataDir)
    .option('--keep-days <days>', retention)
    .option('--force-expired', 'restore a backup older than the retention (the only one left)')
    .action(
      act((options, file) =>
        run(
          {
            command: 'restore',
            file,
            keepDays: options.keepDays as string | undefined,
            forceExpired: Boolean(options.forceExpired),
          },
          options,
        ),
      ),
    );

  keys
    .command('rotate')
    .summary('Re-wraps every stored key under SUBJECT_KEYS_MASTER_KEY (the previous key in SUBJECT_KEYS_PREVIOUS_MASTER_KEY)')
    .description(
      'Row by row, each with a conditional write (a key destroyed meanwhile stays destroyed); idempotent, run it again after an interruption. ' +
        'Reports the counts; fails naming how many keys neither master key opens',
    )
    .option('--data-dir <dir>', dataDir)
    .action(act((options) => run({ command: 'rotate' }, options)));
}
