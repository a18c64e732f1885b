import type { EventLog, SubjectKeyStore, SubjectKeyWrapping } from '@rsd/ports';
import { backUpSubjectKeys, restoreSubjectKeys, subjectKeyBackupRetention } from './subject-key-backups';
import { rotateMasterKey } from './master-key-rotation';

/** One of decision 56's maintenance commands of the subject key store, as its command line gives it. */
export type SubjectKeyMaintenance =
  | { command: 'backup'; to: string; keepDays?: string | undefined }
  | { command: 'restore'; file: string; keepDays?: string | undefined; forceExpired?: boolean | undefined }
  | { command: 'rotate' };

/**
 * The maintenance of a subject key store, the same on both runtimes (`rsd subject-keys`, `npm run
 * subject-keys:*`): a backup with the expiry of the older ones, a restore that applies the log's
 * erasures again, a rotation of the master key. `opened` gives what it works on once the retention
 * (its option, else SUBJECT_KEYS_BACKUP_RETENTION_DAYS) is checked, so a bad value fails before
 * anything opens. Answers the command's JSON report.
 */
export async function maintainSubjectKeys(
  maintenance: SubjectKeyMaintenance,
  env: NodeJS.ProcessEnv,
  opened: () => Promise<{ store: SubjectKeyStore; wrapping: SubjectKeyWrapping; eventLog: EventLog | undefined }>,
): Promise<unknown> {
  const keepDays = maintenance.command === 'rotate' ? 0 : subjectKeyBackupRetention(maintenance.keepDays, env);
  const { store, wrapping, eventLog } = await opened();
  if (maintenance.command === 'backup') return backUpSubjectKeys({ store, wrapping, dir: maintenance.to, keepDays });
  if (maintenance.command === 'restore') {
    const { file, forceExpired } = maintenance;
    return restoreSubjectKeys({ file, store, wrapping, eventLog, keepDays, forceExpired: forceExpired ?? false });
  }
  return rotateMasterKey({ store, wrapping, eventLog });
}
