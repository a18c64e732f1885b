import type { StatementSync } from 'node:sqlite';
import { isListed, type ListedView, type ViewDefinition } from '@rsd/domain';
import type { ListRange, ViewStore } from '@rsd/ports';
import { LRUCache } from 'lru-cache';
import { deepFreeze, getOrAdd } from '../memory-view-store';
import { openEmbeddedDatabase, settled, text, type EmbeddedDatabase } from './database';

export interface SqliteViewStoreOptions {
  file: string;
  /** Views of different namespaces (READ_VIEWS_DB) live side by side: a rebuild writes a new one while the old one serves. */
  namespace: string;
  /** Documents kept parsed in memory, most recently used first (default 10,000). */
  cacheEntries?: number;
}

const DEFAULT_CACHE_ENTRIES = 10_000;
/** Ranges whose keys are kept (listedKeys): at most a hundred keys each. */
const LISTS_REMEMBERED = 1_000;
/** A key known to have no document (lru-cache keeps no undefined). */
const ABSENT = Symbol('absent');

/**
 * The embedded read views: one table per view, a document per key with its version, and for a
 * listed view its partition and sort key under an index, so a history page is an index range. The
 * version guard is one statement (upsert where newer), which is what keeps the views right under
 * replays. The documents read most recently are kept parsed and frozen in memory (lru-cache: a Map
 * evicting its oldest key scans the holes its deletions left, so its evictions grow slow), which
 * the store can do because it is the only writer of its namespace (one process per data directory;
 * a rebuild writes a namespace of its own): a write replaces its cached document, if it has one,
 * and the cached head of its partition for a view derived from it (`headOf`). A list reads its
 * keys from the partition's index alone and takes the documents it has listed before from a cache
 * of its own, which writes follow in the same way (a portfolio page lists a hundred grants, and
 * parsing them again at every page cost more than the rest of the page's reads). A write does not wait
 * for its commit: the views are rebuilt from the log, and the projection's position joins a commit
 * at or after the one of the writes it covers (database.ts).
 */
export function openSqliteViewStore(options: SqliteViewStoreOptions): ViewStore {
  const db = openEmbeddedDatabase(options.file);
  const tables = new Map<string, ViewStatements>();
  const cache = new LRUCache<string, object | typeof ABSENT>({ max: options.cacheEntries ?? DEFAULT_CACHE_ENTRIES });
  /**
   * Documents of listed views as a list last gave them. Apart from `cache`: a history page is read by
   * range, never by key, and its documents would evict the credentials and latest scores that reads
   * look up by key.
   */
  const listedCache = new LRUCache<string, object>({ max: options.cacheEntries ?? DEFAULT_CACHE_ENTRIES });
  /**
   * The keys a list found, by view and range, and how many writes the view had taken then: while it
   * takes none, the same range lists the same keys (a portfolio's grants change when a grant comes or
   * goes, and its pages are read far more often). Any write to the view makes them all read again.
   */
  const listedKeys = new LRUCache<string, { writes: number; keys: readonly string[] }>({ max: LISTS_REMEMBERED });
  const writesTo = new Map<string, number>();

  /** The view's statements, its table created on first use. */
  function statementsOf(view: ViewDefinition<unknown>): ViewStatements {
    let statements = tables.get(view.name);
    if (!statements) {
      statements = viewStatements(db, createViewTable(db, `view:${options.namespace}:${view.name}`));
      tables.set(view.name, statements);
    }
    return statements;
  }

  /** The derived views (`headOf`) read so far, by the listed view they read: their cached heads follow its writes. */
  const derivedFrom = new Map<string, Set<ViewDefinition<unknown>>>();

  function stored<S>(view: ViewDefinition<S>, key: string): S | undefined {
    const row = view.headOf ? statementsOf(view.headOf).head.get(key) : statementsOf(view).get.get(key);
    return row ? deepFreeze(JSON.parse(text(row.state)) as S) : undefined;
  }

  /**
   * After a write to a listed view: a cached head of its partition that the new state sorts after is
   * replaced by it; one it ties with is read again (which of two equal sort keys heads is the table's
   * choice); one it sorts before stays.
   */
  function followHeads<S>(view: ListedView<S>, state: S, json: string): void {
    for (const derived of derivedFrom.get(view.name) ?? []) {
      const headKey = `${derived.name}\u0000${view.partitionOf(state)}`;
      const head = cache.peek(headKey);
      if (head === undefined) continue;
      const sortKey = view.sortKeyOf(state);
      const headSortKey = head === ABSENT ? undefined : view.sortKeyOf(head as S);
      if (headSortKey === undefined || sortKey > headSortKey) cache.set(headKey, deepFreeze(JSON.parse(json) as object));
      else if (sortKey === headSortKey) cache.delete(headKey);
    }
  }

  /** A document by key: from memory when read recently, else from its table (or its listed view's head). */
  function read<S>(view: ViewDefinition<S>, key: string): S | undefined {
    const cacheKey = `${view.name}\u0000${key}`;
    const cached = cache.get(cacheKey);
    if (cached !== undefined) return cached === ABSENT ? undefined : (cached as S);
    if (view.headOf) getOrAdd(derivedFrom, view.headOf.name, () => new Set()).add(view);
    const state = stored(view, key);
    cache.set(cacheKey, state ?? ABSENT);
    return state;
  }

  return {
    get<S>(view: ViewDefinition<S>, key: string) {
      return settled(() => read(view, key));
    },

    // Each key is an index lookup in this process (or a document in memory), all within one turn.
    getMany<S>(view: ViewDefinition<S>, keys: readonly string[]) {
      return settled(() => {
        const found = new Map<string, S>();
        for (const key of keys) {
          const state = read(view, key);
          if (state !== undefined) found.set(key, state);
        }
        return found;
      });
    },

    put<S>(view: ViewDefinition<S>, key: string, state: S) {
      return settled(() => {
        const listed = isListed(view);
        const put = statementsOf(view).put;
        const json = JSON.stringify(state);
        const { changes } = db.writeSoon(() =>
          put.run(key, view.versionOf(state), listed ? view.partitionOf(state) : null, listed ? view.sortKeyOf(state) : null, json),
        );
        // Write-through for documents someone reads, not for every document written: a history page
        // is read by range, never by key, and caching each of its writes would evict the
        // credentials and latest scores the read path needs. The cached copy is parsed from what
        // was stored, so it is what a read from the table would give (a JSON round trip, cheaper
        // than structuredClone). A refused write means the stored document is newer than this one:
        // read it again next time.
        const cacheKey = `${view.name}\u0000${key}`;
        if (changes === 0) {
          cache.delete(cacheKey);
          listedCache.delete(cacheKey);
          return false;
        }
        if (cache.has(cacheKey)) cache.set(cacheKey, deepFreeze(JSON.parse(json) as object));
        if (listed) {
          writesTo.set(view.name, (writesTo.get(view.name) ?? 0) + 1);
          if (listedCache.has(cacheKey)) listedCache.set(cacheKey, deepFreeze(JSON.parse(json) as object));
          followHeads(view, state, json);
        }
        return true;
      });
    },

    list<S>(view: ListedView<S>, partition: string, range: ListRange) {
      if (range.limit <= 0) return Promise.resolve([]);
      return settled(() => {
        // Absent bounds become bounds every sort key passes, so one prepared statement serves every
        // range; both ends of the range are plain comparisons, so the index bounds the read at both
        // (the newest score on or before a date, decision 55, reads one row however old the date).
        // The keys from the index (or as the same range listed them, if the view has taken no write
        // since), then each document from the list cache, or by its key from the table.
        const statements = statementsOf(view);
        const writes = writesTo.get(view.name) ?? 0;
        const rangeKey = JSON.stringify([view.name, partition, range.atLeast, range.atMost, range.below, range.limit]);
        let listing = listedKeys.get(rangeKey);
        if (listing?.writes !== writes) {
          const rows = statements.list.all(
            partition,
            range.atLeast ?? '',
            range.atMost ?? ABOVE_EVERY_SORT_KEY,
            range.below ?? null,
            range.below ?? null,
            range.limit,
          ) as unknown as [string][];
          listing = { writes, keys: rows.map(([key]) => key) };
          listedKeys.set(rangeKey, listing);
        }
        const states: S[] = [];
        for (const key of listing.keys) {
          const cacheKey = `${view.name}\u0000${key}`;
          let state = listedCache.get(cacheKey);
          if (state === undefined) {
            const stored = statements.get.get(key);
            if (!stored) continue;
            state = deepFreeze(JSON.parse(text(stored.state)) as object);
            listedCache.set(cacheKey, state);
          }
          states.push(state as S);
        }
        return states;
      });
    },

    purgeOrganization(view, organizationId) {
      if (view.headOf) return Promise.resolve();
      return db.write(() => {
        // A whole scan of the view's table: an offboarding is rare, and no index is worth its every write.
        db.statement(`DELETE FROM ${statementsOf(view).table} WHERE json_extract(state, '$.organizationId') = ?`).run(organizationId);
        // Which cached documents were the organization's is not worth finding out: the caches start again.
        cache.clear();
        listedCache.clear();
        listedKeys.clear();
      });
    },

    close: () => db.close(),
  };
}

/** Sort keys are dates and ids in ASCII: the last code point sorts after every one of them (SQLite compares text byte by byte). */
const ABOVE_EVERY_SORT_KEY = '\u{10FFFF}';

interface ViewStatements {
  /** The table's quoted name. */
  table: string;
  get: StatementSync;
  put: StatementSync;
  list: StatementSync;
  head: StatementSync;
}

/** The statements of one view's table; exported so a test can read their query plans. */
export function viewStatementsSql(table: string): Record<Exclude<keyof ViewStatements, 'table'>, string> {
  return {
    get: `SELECT state FROM ${table} WHERE key = ?`,
    put: `INSERT INTO ${table} (key, version, partition, sort_key, state) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET version = excluded.version, partition = excluded.partition,
        sort_key = excluded.sort_key, state = excluded.state
      WHERE excluded.version > version`,
    // The range's keys only: the index holds them, so no row of the table is read.
    list: `SELECT key FROM ${table}
      WHERE partition = ? AND sort_key >= ? AND sort_key <= ? AND (? IS NULL OR sort_key < ?)
      ORDER BY sort_key DESC LIMIT ?`,
    head: `SELECT state FROM ${table} WHERE partition = ? ORDER BY sort_key DESC LIMIT 1`,
  };
}

function viewStatements(db: EmbeddedDatabase, table: string): ViewStatements {
  const sql = viewStatementsSql(table);
  const list = db.statement(sql.list);
  // Rows as arrays: a list hands over a hundred keys, and an object per row cost more than reading them.
  list.setReturnArrays(true);
  return { table, get: db.statement(sql.get), put: db.statement(sql.put), list, head: db.statement(sql.head) };
}

/** Creates the view's table and index if missing; returns the table's quoted name. */
export function createViewTable(db: Pick<EmbeddedDatabase, 'exec'>, name: string): string {
  const table = quoteIdentifier(name);
  db.exec(`CREATE TABLE IF NOT EXISTS ${table} (
    key TEXT PRIMARY KEY, version TEXT NOT NULL, partition TEXT, sort_key TEXT, state TEXT NOT NULL
  ) WITHOUT ROWID`);
  db.exec(
    `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${name}:by-partition`)} ON ${table} (partition, sort_key) WHERE partition IS NOT NULL`,
  );
  return table;
}

/** A view or namespace name is configuration, not input; quoting still keeps any name from being read as SQL. */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
