import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError } from './score-file';

export interface BackupCommandOptions {
  'data-dir'?: string | undefined;
  force?: boolean | undefined;
  'without-webhook-key'?: boolean | undefined;
  'subject-keys'?: string | undefined;
  'without-subject-keys'?: boolean | undefined;
}

export interface BackupCommandContext {
  env: NodeJS.ProcessEnv;
  /** A line for stderr: what the operator must know beside the result. */
  note(line: string): void;
}

/** Secrets a product keeps beside its databases that it makes anew at start when they are missing (none of them in a backup). */
const MADE_AT_START = ['response-signing-keys.json', 'dev-jwt-secret'];
/** Options of rsd restore only. */
const RESTORE_ONLY = ['force', 'without-webhook-key', 'subject-keys', 'without-subject-keys'] as const;

/**
 * `rsd backup FILE` and `rsd restore FILE --data-dir DIR` (decision 41) for the embedded runtime: the
 * work is @rsd/embedded's (backup.ts, restore.ts), loaded only by these commands. `rsd restore` also
 * takes the backup directory an earlier version wrote. A refusal is an error (exit 1); a command
 * given wrongly a UsageError (exit 2). `--force` is restore's only: a backup never replaces a file.
 * The subjects' keys (decision 56) go back with a restore: `--subject-keys` names the product's
 * current key store, which the restore copies in and checks with the master key.
 */
export async function runBackupCommand(
  command: 'backup' | 'restore',
  args: readonly string[],
  options: BackupCommandOptions,
  context: BackupCommandContext,
): Promise<unknown> {
  const [path, ...extra] = args;
  if (!path || extra.length > 0) {
    throw new UsageError(
      command === 'backup'
        ? "rsd backup takes one FILE, the backup's new file"
        : "rsd restore takes one FILE, the backup's file (or the directory of a backup made by an earlier version)",
    );
  }
  if (command === 'backup' && RESTORE_ONLY.some((option) => Boolean(options[option]))) {
    throw new UsageError(
      '--force, --without-webhook-key, --subject-keys and --without-subject-keys are options of rsd restore (a backup is never written over a file)',
    );
  }
  if (command === 'restore' && !options['data-dir']) {
    throw new UsageError('rsd restore needs --data-dir DIR: the data directory to restore into (no product may be running on it)');
  }
  const configuredWebhookKey = context.env.WEBHOOK_SECRET_KEY || undefined;
  const { backupDataDirectory, restoreDataDirectory, SUBJECT_KEYS_DATABASE } = await import('@rsd/embedded');
  const { SUBJECT_KEYS_MASTER_KEY_SECRET } = await import('@rsd/platform');
  // The secrets none of which is in a backup (docs/decisions/0041-backup-and-restore.md), the subjects' master key among
  // them: it opens the key store, which is not in a backup either (decision 56: an erasure destroys a key, and a
  // backup must not bring it back).
  const secrets = ['webhook-secret-key', SUBJECT_KEYS_MASTER_KEY_SECRET.file, ...MADE_AT_START];

  if (command === 'backup') {
    const dataDir = options['data-dir'] ?? context.env.DATA_DIR ?? '.data';
    const manifest = await backupDataDirectory({ dataDir, into: path, configuredWebhookKey });
    const keyStore = join(dataDir, SUBJECT_KEYS_DATABASE);
    context.note(
      `rsd: the keys are not in the backup: keep a copy of ${secrets.map((name) => join(dataDir, name)).join(', ')} ` +
        'apart from it (a restore of webhook subscriptions needs the webhook key, of the sealed events the master key). ' +
        `Nor is the subjects' key store ${keyStore}: it is restored with the backup it belongs to ` +
        `(rsd restore ${path} --data-dir DIR --subject-keys ${keyStore}, the product's current one), ` +
        'never kept in it, so that an erasure made since holds; back it up apart with rsd subject-keys backup --to DIR ' +
        '(those backups are deleted after 35 days, when every erasure holds in every backup).',
    );
    return { backup: resolve(path), ...manifest };
  }

  const dataDir = options['data-dir']!;
  const configuredMasterKey = await configuredSubjectKeysMasterKey(context.env);
  const report = await restoreDataDirectory({
    from: path,
    dataDir,
    force: options.force ?? false,
    withoutWebhookKey: options['without-webhook-key'] ?? false,
    configuredWebhookKey,
    withoutSubjectKeys: options['without-subject-keys'] ?? false,
    ...(options['subject-keys'] !== undefined ? { subjectKeysFrom: options['subject-keys'] } : {}),
    ...(configuredMasterKey ? { configuredSubjectKeysMasterKey: configuredMasterKey } : {}),
  });
  if (report.webhookKey === 'missing') {
    context.note(
      'rsd: restored WITHOUT the webhook key: the webhook subscriptions cannot sign deliveries; delete them and create them again.',
    );
  } else if (report.webhookKey === 'unchecked') {
    context.note('rsd: the backup does not say which webhook key sealed its subscriptions: the one in place was not checked against it.');
  }
  if (report.subjectKeys === 'missing') {
    context.note(
      "rsd: restored WITHOUT the subjects' keys: the restored product serves what its views held when the backup was made, " +
        'and dead-letters every sealed event they had not read.',
    );
  }
  const absent: string[] = [];
  for (const name of MADE_AT_START) if (!(await exists(join(dataDir, name)))) absent.push(name);
  if (absent.length > 0) {
    context.note(
      `rsd: ${absent.join(' and ')} not in ${dataDir}: unless configured (RESPONSE_SIGNING_KEYS, JWT_HS256_SECRET or JWT_JWKS_URL), ` +
        'the product makes new ones at start: responses are then signed with a new key (published in the JWKS) and development tokens must be minted again.',
    );
  }
  return report;
}

/** SUBJECT_KEYS_MASTER_KEY (or its `_FILE`) where the environment sets it, checked; else undefined (the data directory's file is then used). */
export async function configuredSubjectKeysMasterKey(env: NodeJS.ProcessEnv): Promise<Buffer | undefined> {
  const { SUBJECT_KEYS_MASTER_KEY, subjectKeysMasterKey } = await import('@rsd/platform');
  return env[SUBJECT_KEYS_MASTER_KEY] || env[`${SUBJECT_KEYS_MASTER_KEY}_FILE`] ? subjectKeysMasterKey(env) : undefined;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
