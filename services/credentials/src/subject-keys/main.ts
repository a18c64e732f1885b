import { parseArgs } from 'node:util';
import { runMain } from '@rsd/platform';
import { runSubjectKeyMaintenance, SubjectKeyRefusal, type SubjectKeyMaintenance } from '@rsd/runtime';

const USAGE = 'usage: subject-keys backup --to DIR [--keep-days N] | restore FILE [--keep-days N] [--force-expired] | rotate';

/**
 * Decision 56's maintenance of the subject key store (SUBJECT_KEYS_DB), then exits with a JSON report:
 *   node services/credentials/dist/subject-keys/main.js backup --to <dir> [--keep-days 35]
 *   node services/credentials/dist/subject-keys/main.js restore <file> [--keep-days 35] [--force-expired]
 *   node services/credentials/dist/subject-keys/main.js rotate
 * (`npm run subject-keys:backup|restore|rotate`): the same work as the embedded runtime's `rsd subject-keys`.
 */
runMain(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { to: { type: 'string' }, 'keep-days': { type: 'string' }, 'force-expired': { type: 'boolean' } },
  });
  try {
    const result = await runSubjectKeyMaintenance(maintenanceOf(positionals, values), process.env);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    // A refusal is the operator's to read: its line alone, exit 1 (any other failure keeps its cause).
    if (!(error instanceof Error) || error.name !== 'SubjectKeyRefusal') throw error;
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
  }
});

function maintenanceOf(
  [command, file, ...extra]: string[],
  values: { to?: string | undefined; 'keep-days'?: string | undefined; 'force-expired'?: boolean | undefined },
): SubjectKeyMaintenance {
  const keepDays = values['keep-days'];
  if (extra.length === 0 && command === 'backup' && values.to && !file) return { command, to: values.to, keepDays };
  if (extra.length === 0 && command === 'restore' && file) return { command, file, keepDays, forceExpired: values['force-expired'] };
  if (extra.length === 0 && command === 'rotate' && !file) return { command };
  throw new SubjectKeyRefusal(USAGE);
}
