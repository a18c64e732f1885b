import { DatabaseSync, StatementSync } from 'node:sqlite';
import { currentScoreView, READ_VIEWS, scoreHistoryView } from '@rsd/domain';
import { projectEvent } from '@rsd/consumers';
import { aCalculatedScore, describeViewStoreContract, scoreCalculated } from '@rsd/testkit';
import { aTempDatabasePerTest, onATempDatabase } from '../testing/temp-database';
import { openSqliteViewStore, viewStatementsSql } from './sqlite-view-store';

for (const [name, cacheEntries] of [
  ['SQLite', undefined],
  ['SQLite, a cache of one document (every other read from the table)', 1],
] as const) {
  describeViewStoreContract(name, () =>
    onATempDatabase('views', (file) => openSqliteViewStore({ file, namespace: 'views', cacheEntries })),
  );
}

describe('SQLite view store', () => {
  const temp = aTempDatabasePerTest('views');

  const days = ['2026-11-18', '2026-11-19', '2026-11-20'];
  const project = async (store: ReturnType<typeof openSqliteViewStore>) => {
    for (const [n, scoreDate] of days.entries()) {
      await projectEvent(store, READ_VIEWS, scoreCalculated(aCalculatedScore('acme', scoreDate, { score: 60 + n })));
    }
  };

  it('when the store is closed and opened again, then the documents are still there', async () => {
    const first = openSqliteViewStore({ file: temp.file, namespace: 'views' });
    await project(first);
    await first.close();

    const reopened = openSqliteViewStore({ file: temp.file, namespace: 'views' });

    expect(await reopened.get(currentScoreView, 'acme')).toEqual({
      ...aCalculatedScore('acme', '2026-11-20', { score: 62 }),
      eventId: expect.any(String),
    });
    const history = await reopened.list(scoreHistoryView, 'acme', { limit: 10 });
    expect(history.map((entry) => entry.scoreDate)).toEqual([...days].reverse());
    await reopened.close();
  });

  it('when two namespaces share the database, then their documents stay apart (a rebuild beside the live views)', async () => {
    const live = openSqliteViewStore({ file: temp.file, namespace: 'live' });
    const rebuild = openSqliteViewStore({ file: temp.file, namespace: 'rebuild' });
    await project(live);

    expect(await rebuild.get(currentScoreView, 'acme')).toBeUndefined();
    expect(await rebuild.list(scoreHistoryView, 'acme', { limit: 10 })).toEqual([]);
    await Promise.all([live.close(), rebuild.close()]);
  });

  it('when a partition is listed again, then the documents listed before are handed out as they were, and a write replaces its own', async () => {
    const store = openSqliteViewStore({ file: temp.file, namespace: 'views' });
    await project(store);
    const first = await store.list(scoreHistoryView, 'acme', { limit: 10 });
    await projectEvent(
      store,
      READ_VIEWS,
      scoreCalculated(aCalculatedScore('acme', days[1]!, { score: 99, calculatedAt: '2026-11-21T00:00:00.000Z' })),
    );

    const again = await store.list(scoreHistoryView, 'acme', { limit: 10 });

    // Not parsed again: the very documents of the first list, but the one written since.
    expect(again[0]).toBe(first[0]);
    expect(again[2]).toBe(first[2]);
    expect(again.map((state) => state.score)).toEqual([62, 99, 60]);
    expect(Object.isFrozen(again[1])).toBe(true);
    await store.close();
  });

  it('when a range is listed again and its view has taken no write since, then its keys are not read from the table again', async () => {
    const store = openSqliteViewStore({ file: temp.file, namespace: 'views' });
    await project(store);
    const reads = jest.spyOn(StatementSync.prototype, 'all');
    try {
      await store.list(scoreHistoryView, 'acme', { limit: 10 });
      await store.list(scoreHistoryView, 'acme', { limit: 10 });
      const beforeTheWrite = reads.mock.calls.length;
      await projectEvent(store, READ_VIEWS, scoreCalculated(aCalculatedScore('acme', '2026-11-21', { score: 70 })));
      const afterIt = await store.list(scoreHistoryView, 'acme', { limit: 10 });

      expect(beforeTheWrite).toBe(1);
      expect(reads.mock.calls.length).toBe(2);
      expect(afterIt.map((state) => state.score)).toEqual([70, 62, 61, 60]);
    } finally {
      reads.mockRestore();
      await store.close();
    }
  });

  it("when a document is read, a history page listed or a partition's newest read, then the query goes through the key or the partition index", async () => {
    const store = openSqliteViewStore({ file: temp.file, namespace: 'views' });
    await project(store);
    await store.close();
    const db = new DatabaseSync(temp.file);
    try {
      const table = `"view:views:${scoreHistoryView.name}"`;
      const plan = (query: string, ...params: (string | number | null)[]) =>
        db
          .prepare(`EXPLAIN QUERY PLAN ${query}`)
          .all(...params)
          .map((row) => String(row.detail));

      const sql = viewStatementsSql(table);
      expect(plan(sql.get, 'k')).toEqual([expect.stringMatching(/^SEARCH .* USING PRIMARY KEY \(key=\?\)/)]);
      // A list reads its keys from the index alone (COVERING): no row of the table.
      const listed = plan(sql.list, 'acme', '', '\u{10FFFF}', null, null, 10);
      expect(listed).toEqual([
        expect.stringMatching(/^SEARCH .* USING COVERING INDEX .*by-partition.* \(partition=\? AND sort_key>\? AND sort_key<\?\)/),
      ]);
      // A certificate's read (decision 55): the newest score at or before asOf, bounded at both ends by the same index.
      const asOf = plan(sql.list, 'acme', '', '2026-11-19', null, null, 1);
      expect(asOf).toEqual([
        expect.stringMatching(/^SEARCH .* USING COVERING INDEX .*by-partition.* \(partition=\? AND sort_key>\? AND sort_key<\?\)/),
      ]);
      expect(plan(sql.head, 'acme')).toEqual([expect.stringMatching(/^SEARCH .* USING INDEX .*by-partition.* \(partition=\?\)/)]);
    } finally {
      db.close();
    }
  });
});
