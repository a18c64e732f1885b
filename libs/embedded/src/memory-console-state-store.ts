import { LRUCache } from 'lru-cache';
import type { ConsoleStateKind, ConsoleStateRecord, ConsoleStateStore } from '@rsd/ports';

/** Past this many records of a kind, the least recently used goes: memory never grows with traffic. */
export const MEMORY_CONSOLE_STATE_LIMIT = 10_000;

/**
 * The console's state in this process's memory: the embedded runtime's (one process; a restart
 * prints a new sign-in link anyway). Each kind is bounded, the least recently used record first out.
 */
export function createMemoryConsoleStateStore(limit = MEMORY_CONSOLE_STATE_LIMIT): ConsoleStateStore {
  const tables = new Map<ConsoleStateKind, LRUCache<string, ConsoleStateRecord>>();
  const table = (kind: ConsoleStateKind) => {
    let found = tables.get(kind);
    if (!found) tables.set(kind, (found = new LRUCache<string, ConsoleStateRecord>({ max: limit })));
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
      table(kind).set(key, { ...record, value: { ...record.value } });
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
      if (record) entries.set(key, { ...record, lastSeenAt, expiresAt });
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
