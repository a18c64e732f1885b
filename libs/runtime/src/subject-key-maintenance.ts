import { maintainSubjectKeys, subjectKeyBackupRetention, type SubjectKeyMaintenance } from '@rsd/consumers';
import type { Need } from '@rsd/ports';
import { runTask } from './run-task';

export { SubjectKeyRefusal, type SubjectKeyMaintenance } from '@rsd/consumers';

/** The servers each command needs: a backup reads the key store alone; a restore and a rotation also the log's erasures. */
const NEEDS: Record<SubjectKeyMaintenance['command'], readonly Need[]> = {
  backup: ['mongo'],
  restore: ['kafka', 'mongo'],
  rotate: ['kafka', 'mongo'],
};

/**
 * Decision 56's maintenance of the runtime's subject key store as a task (the distributed runtime's
 * `npm run subject-keys:*`, SUBJECT_KEYS_DB): the key store the services use, their master keys (the
 * previous one too during a rotation), and the event log. A bad retention fails before anything opens.
 */
export function runSubjectKeyMaintenance(maintenance: SubjectKeyMaintenance, env: NodeJS.ProcessEnv): Promise<unknown> {
  if (maintenance.command !== 'rotate') subjectKeyBackupRetention(maintenance.keepDays, env);
  return runTask({ name: `subject-keys-${maintenance.command}`, needs: NEEDS[maintenance.command], env }, ({ runtime }) =>
    maintainSubjectKeys(maintenance, env, async () => ({
      store: await runtime.openSubjectKeyStore(),
      wrapping: runtime.subjectKeyWrapping,
      eventLog: maintenance.command === 'backup' ? undefined : runtime.eventLog,
    })),
  );
}
