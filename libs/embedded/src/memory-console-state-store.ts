import type { ConsoleStateKind, ConsoleStateRecord, ConsoleStateStore } from '@rsd/ports';

/** Past this many records of a kind, the least recently used goes: memory never grows with traffic. */
export const MEMORY_CONSOLE_STATE_LIMIT = 10_000;

/**
 * The console's state in this process's memory: the embedded runtime's (one process; a restart
 * prints a new sign-in link anyway). Each kind is a Map in least-recently-used order, bounded.
 */
export function createMemoryConsoleStateStore(limit = MEMORY_CONSOLE_STATE_LIMIT): ConsoleStateStore {
  const tables = new Map<ConsoleStateKind, Map<string, ConsoleStateRecord>>();
  const table = (kind: ConsoleStateKind) => {
    let found = tables.get(kind);
    if (!found) tables.set(kind, (found = new Map<string, ConsoleStateRecord>()));
    return found;
  };
  const live = (kind: ConsoleStateKind, key: string, now: number) => {
    const record = table(kind).get(key);
    if (record && record.expiresAt <= now) {
      table(kind).delete(key);
      return undefined;
    }
    return record;
  };

  return {
    put: (kind, key, record) => {
      const entries = table(kind);
      entries.delete(key);
      entries.set(key, { ...record, value: { ...record.value } });
      if (entries.size > limit) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      return Promise.resolve();
    },
    get: (kind, key, now) => Promise.resolve(copy(live(kind, key, now))),
    take: (kind, key, now) => {
      const record = live(kind, key, now);
      table(kind).delete(key);
      return Promise.resolve(copy(record));
    },
    touch: (kind, key, lastSeenAt, expiresAt) => {
      const entries = table(kind);
      const record = entries.get(key);
      if (record) {
        // Re-inserted, so the Map's order stays least recently used first.
        entries.delete(key);
        entries.set(key, { ...record, lastSeenAt, expiresAt });
      }
      return Promise.resolve();
    },
    delete: (kind, key) => {
      table(kind).delete(key);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
}

const copy = (record: ConsoleStateRecord | undefined) => record && { ...record, value: { ...record.value } };
