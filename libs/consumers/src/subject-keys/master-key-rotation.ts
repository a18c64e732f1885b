import type { EventLog, SubjectId, SubjectKeyStore, SubjectKeyWrapping } from '@rsd/ports';
import { erasuresInLog, reapplyErasures } from './erasures-in-log';
import { SubjectKeyRefusal } from './subject-key-backups';

export interface MasterKeyRotationReport {
  /** The current master key's digest: every key is wrapped by it afterwards. */
  masterKeyId: string;
  rewrapped: number;
  /** Wrapped by the current master key already (a rotation taken up again, or a key made since). */
  alreadyCurrent: number;
  destroyed: number;
  /** Changed between its reading and its re-wrapping (destroyed, or re-wrapped by another run): left as it is. */
  changedMeanwhile: number;
  erasuresReapplied: number;
  seconds: number;
}

const PAGE = 500;

/**
 * Decision 56: every stored key re-wrapped under the current master key, row by row, each with a
 * conditional write (`rewrap`: only if the row still holds what was read, and is not destroyed).
 * Idempotent and resumable: a key wrapped by the current key already is counted and left. The
 * erasures of the log are then applied again, so a destruction that a conditional write applied as a
 * read and a rewrite (FerretDB) could have written over holds. Throws, after every key it could
 * re-wrap, when keys remain that neither master key opens (a wrong previous key, or none), naming
 * how many and their master keys' digests.
 */
export async function rotateMasterKey(options: {
  store: Pick<SubjectKeyStore, 'list' | 'rewrap' | 'read' | 'destroy'>;
  wrapping: SubjectKeyWrapping;
  eventLog: EventLog | undefined;
  now?: () => number;
}): Promise<MasterKeyRotationReport> {
  const clock = options.now ?? (() => performance.now());
  const started = clock();
  const { wrapping } = options;
  const report = { masterKeyId: wrapping.masterKeyId, rewrapped: 0, alreadyCurrent: 0, destroyed: 0, changedMeanwhile: 0 };
  const unopened = new Map<string, SubjectId[]>();
  for (
    let after: string | undefined, page;
    (page = await options.store.list(after, PAGE)).length > 0;
    after = page[page.length - 1]!.subject
  ) {
    for (const key of page) {
      if (key.state === 'destroyed') {
        report.destroyed += 1;
        continue;
      }
      let rewrapped: string;
      try {
        rewrapped = wrapping.rewrap(key.subject, key.wrappedKey);
      } catch (error) {
        if (!(error instanceof Error) || error.name !== 'SealedValueError') throw error;
        const by = wrapping.wrappedBy(key.wrappedKey) ?? 'unknown';
        unopened.set(by, [...(unopened.get(by) ?? []), key.subject]);
        continue;
      }
      if (rewrapped === key.wrappedKey) report.alreadyCurrent += 1;
      else if (await options.store.rewrap(key.subject, key.wrappedKey, rewrapped)) report.rewrapped += 1;
      else report.changedMeanwhile += 1;
    }
  }
  const erasuresReapplied = options.eventLog ? await reapplyErasures(options.store, await erasuresInLog(options.eventLog)) : 0;
  if (unopened.size > 0) {
    const count = [...unopened.values()].reduce((sum, subjects) => sum + subjects.length, 0);
    const which = [...unopened].map(
      ([by, subjects]) => `${subjects.length} by ${by} (${subjects.slice(0, 3).join(', ')}${subjects.length > 3 ? ', …' : ''})`,
    );
    throw new SubjectKeyRefusal(
      `${count} stored key(s) are wrapped by a master key that is neither SUBJECT_KEYS_MASTER_KEY (${wrapping.masterKeyId}) nor ` +
        `${wrapping.previousMasterKeyId ? `SUBJECT_KEYS_PREVIOUS_MASTER_KEY (${wrapping.previousMasterKeyId})` : 'a SUBJECT_KEYS_PREVIOUS_MASTER_KEY (none is set)'}: ` +
        `${which.join('; ')}. Set SUBJECT_KEYS_PREVIOUS_MASTER_KEY to the key that wrapped them and run the rotation again ` +
        `(${report.rewrapped} re-wrapped now, ${report.alreadyCurrent} current already).`,
    );
  }
  return { ...report, erasuresReapplied, seconds: Math.round(clock() - started) / 1000 };
}
