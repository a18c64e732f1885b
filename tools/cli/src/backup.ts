import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError } from './score-file';

export interface BackupCommandOptions {
  'data-dir'?: string | undefined;
  force?: boolean | undefined;
  'without-webhook-key'?: boolean | undefined;
}

export interface BackupCommandContext {
  env: NodeJS.ProcessEnv;
  /** A line for stderr: what the operator must know beside the result. */
  note(line: string): void;
}

/** The secrets a product keeps beside its databases, none of them in a backup (docs/decisions/0041-backup-and-restore.md). */
const SECRETS = ['webhook-secret-key', 'response-signing-keys.json', 'dev-jwt-secret'];

/**
 * `rsd backup FILE` and `rsd restore FILE --data-dir DIR` (decision 41) for the embedded runtime: the
 * work is @rsd/embedded's (backup.ts, restore.ts), loaded only by these commands. `rsd restore` also
 * takes the backup directory an earlier version wrote. A refusal is an error (exit 1); a command
 * given wrongly a UsageError (exit 2). `--force` is restore's only: a backup never replaces a file.
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
  if (command === 'backup' && (options.force || options['without-webhook-key'])) {
    throw new UsageError('--force and --without-webhook-key are options of rsd restore (a backup is never written over a file)');
  }
  if (command === 'restore' && !options['data-dir']) {
    throw new UsageError('rsd restore needs --data-dir DIR: the data directory to restore into (no product may be running on it)');
  }
  const configuredWebhookKey = context.env.WEBHOOK_SECRET_KEY || undefined;
  const { backupDataDirectory, restoreDataDirectory } = await import('@rsd/embedded');

  if (command === 'backup') {
    const dataDir = options['data-dir'] ?? context.env.DATA_DIR ?? '.data';
    const manifest = await backupDataDirectory({ dataDir, into: path, configuredWebhookKey });
    context.note(
      `rsd: the keys are not in the backup: keep a copy of ${SECRETS.map((name) => join(dataDir, name)).join(', ')} ` +
        'apart from it (a restore of webhook subscriptions needs the webhook key).',
    );
    return { backup: resolve(path), ...manifest };
  }

  const dataDir = options['data-dir']!;
  const report = await restoreDataDirectory({
    from: path,
    dataDir,
    force: options.force ?? false,
    withoutWebhookKey: options['without-webhook-key'] ?? false,
    configuredWebhookKey,
  });
  if (report.webhookKey === 'missing') {
    context.note(
      'rsd: restored WITHOUT the webhook key: the webhook subscriptions cannot sign deliveries; delete them and create them again.',
    );
  } else if (report.webhookKey === 'unchecked') {
    context.note('rsd: the backup does not say which webhook key sealed its subscriptions: the one in place was not checked against it.');
  }
  const absent: string[] = [];
  for (const name of SECRETS.slice(1)) if (!(await exists(join(dataDir, name)))) absent.push(name);
  if (absent.length > 0) {
    context.note(
      `rsd: ${absent.join(' and ')} not in ${dataDir}: unless configured (RESPONSE_SIGNING_KEYS, JWT_HS256_SECRET or JWT_JWKS_URL), ` +
        'the product makes new ones at start: responses are then signed with a new key (published in the JWKS) and development tokens must be minted again.',
    );
  }
  return report;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
