import type { StatementSync } from 'node:sqlite';
import { openEmbeddedDatabase, settled, type EmbeddedDatabase } from './database';

/**
 * A store's use of its database: every call refused once the store is closed, as every port promises.
 * Functions, not methods: a store takes them apart and hands them on.
 */
export interface StoreDatabase {
  statement: (sql: string) => StatementSync;
  /** Reads now, its errors as the promise's. */
  read: <T>(work: () => T) => Promise<T>;
  /** In this turn's transaction; resolves once it is committed and synced (EmbeddedDatabase.write). */
  write: <T>(change: () => T) => Promise<T>;
  /** In this turn's transaction, without waiting for its commit (EmbeddedDatabase.changeSoon). */
  changeSoon: <T>(change: () => T) => Promise<T>;
  readonly database: EmbeddedDatabase;
  readonly closed: boolean;
  /** Closing twice is harmless. */
  close: () => Promise<void>;
}

/** Opens `file`, creates the store's tables if they are missing, and names the store in the error a closed one answers. */
export function openStoreDatabase(file: string, store: string, createTables: (db: EmbeddedDatabase) => void): StoreDatabase {
  const db = openEmbeddedDatabase(file);
  createTables(db);
  let closed = false;
  const ifOpen = <T>(work: () => Promise<T>): Promise<T> => (closed ? Promise.reject(new Error(`${store} is closed`)) : work());
  return {
    statement: (sql) => db.statement(sql),
    read: (work) => ifOpen(() => settled(work)),
    write: (change) => ifOpen(() => db.write(change)),
    changeSoon: (change) => ifOpen(() => settled(() => db.changeSoon(change))),
    database: db,
    get closed() {
      return closed;
    },
    close: () => {
      if (closed) return Promise.resolve();
      closed = true;
      return db.close();
    },
  };
}
