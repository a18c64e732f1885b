import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { hasExpired, type StoredAuthorization } from '@rsd/domain';
import type { AuthorizationStore, OutboxEntry, PendingOutbox } from '@rsd/ports';

/** A record together with the events it still owes the event log. */
interface StoredEntry {
  record: StoredAuthorization;
  outbox: OutboxEntry[];
}

type Entries = ReadonlyMap<string, StoredEntry>;

interface StoreDocument {
  authorizations: StoredEntry[];
}

/**
 * The embedded authorization store: everything in memory, and the whole store rewritten as one JSON
 * document on every change (temp file, fsync, rename). A record and the events it owes therefore
 * reach the disk in one atomic step, which is what the transactional outbox needs.
 */
export async function openFileAuthorizationStore(options: { file: string }): Promise<AuthorizationStore> {
  const { file } = options;
  await mkdir(dirname(file), { recursive: true });
  let entries = await load(file);
  let changes: Promise<unknown> = Promise.resolve();
  let closed = false;

  /** Runs changes one at a time; the memory changes only once the new document is on disk. */
  function change<T>(decide: (current: Entries) => { next?: Entries; result: T }): Promise<T> {
    if (closed) return Promise.reject(new Error('the authorization store is closed'));
    const run = changes.then(async () => {
      const { next, result } = decide(entries);
      if (next) {
        await save(file, next);
        entries = next;
      }
      return result;
    });
    changes = run.catch(() => undefined);
    return run;
  }

  return {
    create(record, outbox) {
      return change((current) => {
        if (current.has(record.clientId)) throw new Error(`authorization ${record.clientId} already exists`);
        return { next: withEntry(current, record.clientId, copyEntry(record, outbox)), result: undefined };
      });
    },

    update(record, expectedRevision, outbox) {
      return change((current) => {
        const stored = current.get(record.clientId);
        if (!stored || stored.record.revision !== expectedRevision) return { result: false };
        const entry = copyEntry(record, [...stored.outbox, ...outbox]);
        return { next: withEntry(current, record.clientId, entry), result: true };
      });
    },

    find(organizationId, clientId) {
      const record = entries.get(clientId)?.record;
      return Promise.resolve(record?.organizationId === organizationId ? structuredClone(record) : undefined);
    },

    list(organizationId) {
      const records = [...entries.values()]
        .map((entry) => entry.record)
        .filter((record) => record.organizationId === organizationId)
        .sort(newestFirst);
      return Promise.resolve(records.map((record) => structuredClone(record)));
    },

    findDueForExpiry(now, limit) {
      const due = [...entries.values()]
        .map((entry) => entry.record)
        .filter((r) => !r.revokedAt && !r.expiredAt && hasExpired(r.expiresAt, now))
        .sort((a, b) => Date.parse(a.expiresAt ?? '') - Date.parse(b.expiresAt ?? ''))
        .slice(0, Math.max(0, limit));
      return Promise.resolve(due.map((record) => structuredClone(record)));
    },

    pendingOutbox(limit) {
      const pending: PendingOutbox[] = [...entries.values()]
        .filter((entry) => entry.outbox.length > 0)
        .slice(0, Math.max(0, limit))
        .map((entry) => ({ clientId: entry.record.clientId, entries: structuredClone(entry.outbox) }));
      return Promise.resolve(pending);
    },

    markPublished(clientId, entryIds) {
      return change((current) => {
        const stored = current.get(clientId);
        const outbox = stored?.outbox.filter((entry) => !entryIds.includes(entry.id));
        if (!stored || !outbox || outbox.length === stored.outbox.length) return { result: undefined };
        return { next: withEntry(current, clientId, { record: stored.record, outbox }), result: undefined };
      });
    },

    async close() {
      closed = true;
      await changes;
    },
  };
}

/** Changes build a new map, so a failed write leaves the current one untouched. */
function withEntry(current: Entries, clientId: string, entry: StoredEntry): Entries {
  return new Map(current).set(clientId, entry);
}

function copyEntry(record: StoredAuthorization, outbox: readonly OutboxEntry[]): StoredEntry {
  return { record: structuredClone(record), outbox: structuredClone([...outbox]) };
}

/** Ties on createdAt fall back to the Client ID, so the order is the same on every call. */
function newestFirst(a: StoredAuthorization, b: StoredAuthorization): number {
  return Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0);
}

async function load(file: string): Promise<Entries> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw error;
  }
  const document = JSON.parse(text) as StoreDocument;
  if (!Array.isArray(document.authorizations)) throw new Error(`authorization store ${file} is not a store document`);
  return new Map(document.authorizations.map((entry) => [entry.record.clientId, entry]));
}

async function save(file: string, entries: Entries): Promise<void> {
  const document: StoreDocument = { authorizations: [...entries.values()] };
  const temporary = `${file}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(JSON.stringify(document));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  await syncDirectory(dirname(file));
}

/** The rename is durable only once the directory entry is; Windows cannot open a directory to sync it. */
async function syncDirectory(directory: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
