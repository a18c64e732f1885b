import type { StatementSync } from 'node:sqlite';
import { nextExpiryNoticeAt, offerAwaitingAccountOf, type StoredAuthorization, type StoredRecipientAccount } from '@rsd/domain';
import type { AuthorizationStore, OutboxEntry, PendingOutbox } from '@rsd/ports';
import { recordOf, text, type EmbeddedDatabase } from './database';
import { openStoreDatabase } from './store-database';
import { createAccessReviewTables, sqliteAccessReviews } from './sqlite-access-reviews';

/** The store's reads, named so that a test can check that each one goes through an index. */
export const QUERIES = {
  find: 'SELECT record FROM authorizations WHERE client_id = ? AND organization_id = ?',
  findByClientId: 'SELECT record FROM authorizations WHERE client_id = ?',
  knownClientIds: 'SELECT client_id FROM authorizations WHERE client_id IN (SELECT value FROM json_each(?))',
  findAccount: 'SELECT record FROM recipient_accounts WHERE account_id = ?',
  accountByKey: `SELECT record FROM recipient_accounts WHERE account_id IN (
    SELECT account_id FROM recipient_accounts WHERE key_digest = ?
    UNION SELECT account_id FROM recipient_accounts WHERE previous_key_digest = ?
    UNION SELECT account_id FROM recipient_account_leaked_keys WHERE key_digest = ?)`,
  byKeyDigest: `SELECT record FROM authorizations
    WHERE client_id = (SELECT client_id FROM authorization_keys WHERE key_digest = ?)`,
  list: 'SELECT record FROM authorizations WHERE organization_id = ? ORDER BY created_at DESC, client_id',
  byClaimToken: `SELECT record FROM authorizations
    WHERE client_id = (SELECT client_id FROM claim_links WHERE token_digest = ?)`,
  dueForExpiry: `SELECT record FROM authorizations
    WHERE ended = 0 AND expires_ms IS NOT NULL AND expires_ms <= ? ORDER BY expires_ms LIMIT ?`,
  dueForExpiryNotice: `SELECT a.record FROM expiry_notices n JOIN authorizations a ON a.client_id = n.client_id
    WHERE n.due_ms <= ? ORDER BY n.due_ms, n.client_id LIMIT ?`,
  offers: `SELECT a.record FROM account_offers o JOIN authorizations a ON a.client_id = o.client_id
    WHERE o.account_id = ? AND o.client_id < ? ORDER BY o.client_id DESC LIMIT ?`,
  pendingOutbox: `SELECT client_id, id, topic, key, value FROM outbox
    WHERE client_id IN (SELECT client_id FROM outbox GROUP BY client_id ORDER BY MIN(seq) LIMIT ?) ORDER BY seq`,
} as const;

/** Decision 56's retention: records keeping an address seen, or an alert's address, from before an instant. */
const ALERT_ADDRESSES_BEFORE = `SELECT record FROM authorizations
  WHERE EXISTS (SELECT 1 FROM json_each(record, '$.activity.addresses') WHERE json_extract(value, '$.seenAt') < ?)
     OR EXISTS (SELECT 1 FROM json_each(record, '$.alerts')
                WHERE json_extract(value, '$.address') IS NOT NULL AND json_extract(value, '$.at') < ?)
  LIMIT ?`;

/**
 * The embedded authorization store: a row per authorization, with the events it still owes the
 * event log in an outbox table written in the same transaction (a record and its events reach the
 * disk together, or neither does). Lists go through an index per organization and expiry through a
 * partial index of the records still active with an `expiresAt`, so neither reads the whole store.
 */
export function openSqliteAuthorizationStore(options: { file: string }): AuthorizationStore {
  // Each change joins the turn's transaction and resolves once it is durable (the outbox marks excepted: see markPublished).
  const {
    statement,
    read: run,
    write,
    changeSoon,
    database,
    close,
  } = openStoreDatabase(options.file, 'the authorization store', createAuthorizationTables);

  const records = (rows: Record<string, unknown>[]) => rows.map((row) => JSON.parse(text(row.record)) as StoredAuthorization);

  return {
    // Decision 54: access reviews, their events in the same outbox (keyed by the review's id).
    ...sqliteAccessReviews({ statement, read: run, write, addToOutbox }),

    create(record, outbox) {
      return write(() => {
        const { changes } = statement(
          `INSERT INTO authorizations (client_id, organization_id, created_at, revision, expires_ms, ended, record)
             VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (client_id) DO NOTHING`,
        ).run(...columnsOf(record));
        if (changes === 0) throw new Error(`authorization ${record.clientId} already exists`);
        keepClaimLink(statement, record);
        keepKeys(statement, record);
        keepExpiryNotice(statement, record);
        keepOffer(statement, record);
        addToOutbox(statement, record.clientId, outbox);
      });
    },

    update(record, expectedRevision, outbox) {
      return write(() => {
        const [clientId, organizationId, createdAt, revision, expiresMs, ended, json] = columnsOf(record);
        const { changes } = statement(
          `UPDATE authorizations SET organization_id = ?, created_at = ?, revision = ?, expires_ms = ?, ended = ?, record = ?
             WHERE client_id = ? AND revision = ?`,
        ).run(organizationId, createdAt, revision, expiresMs, ended, json, clientId, expectedRevision);
        if (changes === 0) return false;
        keepClaimLink(statement, record);
        keepKeys(statement, record);
        keepExpiryNotice(statement, record);
        keepOffer(statement, record);
        addToOutbox(statement, record.clientId, outbox);
        return true;
      });
    },

    find(organizationId, clientId) {
      return run(() => recordOf<StoredAuthorization>(statement(QUERIES.find).get(clientId, organizationId)));
    },

    findByClientId(clientId) {
      return run(() => recordOf<StoredAuthorization>(statement(QUERIES.findByClientId).get(clientId)));
    },

    createAccount(account, outbox) {
      return write(() => {
        const { changes } = statement(
          `INSERT INTO recipient_accounts (account_id, revision, key_digest, previous_key_digest, record)
             VALUES (?, ?, ?, ?, ?) ON CONFLICT (account_id) DO NOTHING`,
        ).run(account.accountId, account.revision, keyColumnOf(account), account.previousKeyDigest, JSON.stringify(account));
        if (changes === 0) throw new Error(`recipient account ${account.accountId} already exists`);
        keepLeakedAccountKey(statement, account);
        addToOutbox(statement, account.accountId, outbox);
      });
    },

    updateAccount(account, expectedRevision, outbox) {
      return write(() => {
        const { changes } = statement(
          `UPDATE recipient_accounts SET revision = ?, key_digest = ?, previous_key_digest = ?, record = ?
             WHERE account_id = ? AND revision = ?`,
        ).run(
          account.revision,
          keyColumnOf(account),
          account.previousKeyDigest,
          JSON.stringify(account),
          account.accountId,
          expectedRevision,
        );
        if (changes === 0) return false;
        keepLeakedAccountKey(statement, account);
        addToOutbox(statement, account.accountId, outbox);
        return true;
      });
    },

    findAccount(accountId) {
      return run(() => recordOf<StoredRecipientAccount>(statement(QUERIES.findAccount).get(accountId)));
    },

    findAccountByKeyDigest(keyDigest) {
      return run(() => {
        // The empty string is the column of an account without a key (keyColumnOf), never a digest.
        const row = keyDigest === '' ? undefined : statement(QUERIES.accountByKey).get(keyDigest, keyDigest, keyDigest);
        return recordOf<StoredRecipientAccount>(row);
      });
    },

    findByKeyDigest(keyDigest) {
      return run(() => recordOf<StoredAuthorization>(statement(QUERIES.byKeyDigest).get(keyDigest)));
    },

    list(organizationId) {
      return run(() => records(statement(QUERIES.list).all(organizationId)));
    },

    findByClaimToken(tokenDigest) {
      return run(() => recordOf<StoredAuthorization>(statement(QUERIES.byClaimToken).get(tokenDigest)));
    },

    findDueForExpiry(now, limit) {
      return run(() => records(statement(QUERIES.dueForExpiry).all(now.getTime(), Math.max(0, limit))));
    },

    findDueForExpiryNotice(now, limit) {
      return run(() => records(statement(QUERIES.dueForExpiryNotice).all(now.getTime(), Math.max(0, limit))));
    },

    listOffers(accountId, { limit, before }) {
      // Every Client ID sorts below "~" (they are letters, digits and "_"): no `before` is the whole range.
      return run(() => records(statement(QUERIES.offers).all(accountId, before ?? '~', Math.max(0, limit))));
    },

    listHeldByAccount(accountId) {
      return run(() =>
        records(
          statement("SELECT record FROM authorizations WHERE json_extract(record, '$.recipientAccountId') = ? ORDER BY client_id").all(
            accountId,
          ),
        ),
      );
    },

    findWithAlertAddressesBefore(before, limit) {
      // A scan (not among QUERIES, whose test wants an index): hourly, and `at`/`seenAt` are ISO strings of one precision, ordered as their times.
      // On the scans' connection: through the shared one, each pass (the first at start) left every record's page in its cache.
      return run(() => records(database.scanStatement(ALERT_ADDRESSES_BEFORE).all(before.toISOString(), before.toISOString(), limit)));
    },

    knownClientIds(clientIds) {
      return run(() => {
        // One statement whatever the count: the ids travel as one JSON array.
        const rows = statement(QUERIES.knownClientIds).all(JSON.stringify([...new Set(clientIds)]));
        return new Set(rows.map((row) => text(row.client_id)));
      });
    },

    purgeOrganization(organizationId) {
      return write(() => {
        const clientIds = statement('SELECT client_id FROM authorizations WHERE organization_id = ?')
          .all(organizationId)
          .map((row) => text(row.client_id));
        for (const table of ['outbox', 'claim_links', 'authorization_keys', 'expiry_notices', 'account_offers', 'authorizations']) {
          const purge = statement(`DELETE FROM ${table} WHERE client_id = ?`);
          for (const clientId of clientIds) purge.run(clientId);
        }
        // Decision 54's reviews name the grants' recipients: they go with the organization.
        statement('DELETE FROM access_reviews WHERE organization_id = ?').run(organizationId);
        return clientIds;
      });
    },

    pendingOutbox(limit) {
      return run(() => {
        const rows = statement(QUERIES.pendingOutbox).all(Math.max(0, limit));
        const pending = new Map<string, OutboxEntry[]>();
        for (const row of rows) {
          const clientId = text(row.client_id);
          const entries = pending.get(clientId) ?? [];
          entries.push({ id: text(row.id), topic: text(row.topic), key: text(row.key), value: text(row.value) });
          pending.set(clientId, entries);
        }
        return [...pending].map(([clientId, entries]): PendingOutbox => ({ clientId, entries }));
      });
    },

    /**
     * Not waited for its sync: the append it follows is synced, and a mark lost to a power cut (it
     * comes later in the one log, so it can never outlive its append) only has the relay publish the
     * entries again, which consumers take once by revision. A create waits for one sync fewer.
     */
    markPublished(clientId, entryIds) {
      return changeSoon(() => {
        for (const id of entryIds) statement('DELETE FROM outbox WHERE client_id = ? AND id = ?').run(clientId, id);
      });
    },

    close,
  };
}

/** The tables, also used by the importer of a data directory written by an earlier version. */
export function createAuthorizationTables(db: Pick<EmbeddedDatabase, 'exec' | 'statement'>): void {
  db.exec(`CREATE TABLE IF NOT EXISTS authorizations (
    client_id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, created_at TEXT NOT NULL, revision INTEGER NOT NULL,
    expires_ms INTEGER, ended INTEGER NOT NULL, record TEXT NOT NULL
  ) WITHOUT ROWID`);
  db.exec('CREATE INDEX IF NOT EXISTS authorizations_by_organization ON authorizations (organization_id, created_at DESC, client_id)');
  db.exec('CREATE INDEX IF NOT EXISTS authorizations_due ON authorizations (expires_ms) WHERE ended = 0 AND expires_ms IS NOT NULL');
  db.exec(`CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY, client_id TEXT NOT NULL, id TEXT NOT NULL, topic TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL
  )`);
  db.exec('CREATE INDEX IF NOT EXISTS outbox_by_client ON outbox (client_id, seq)');
  // Decision 42: recipient accounts, their events in the same outbox (keyed by the account's id).
  db.exec(`CREATE TABLE IF NOT EXISTS recipient_accounts (
    account_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, key_digest TEXT NOT NULL, previous_key_digest TEXT, record TEXT NOT NULL
  ) WITHOUT ROWID`);
  db.exec('CREATE INDEX IF NOT EXISTS recipient_accounts_by_key ON recipient_accounts (key_digest)');
  db.exec(
    'CREATE INDEX IF NOT EXISTS recipient_accounts_by_previous_key ON recipient_accounts (previous_key_digest) WHERE previous_key_digest IS NOT NULL',
  );
  // Decision 38: a table of its own rather than a column, so a database of an earlier version needs no migration.
  db.exec('CREATE TABLE IF NOT EXISTS claim_links (token_digest TEXT PRIMARY KEY, client_id TEXT NOT NULL UNIQUE) WITHOUT ROWID');
  // Decision 43: a grant by any of its keys' digests (current, previous, last leaked), for a leak report; tables of their own, as claim links.
  db.exec('CREATE TABLE IF NOT EXISTS authorization_keys (key_digest TEXT PRIMARY KEY, client_id TEXT NOT NULL) WITHOUT ROWID');
  db.exec('CREATE INDEX IF NOT EXISTS authorization_keys_by_client ON authorization_keys (client_id)');
  // A database written before the table existed gets its records' keys once: only while the table is still
  // empty, asked once before the three fields. Asked in each statement's WHERE, it read and parsed every
  // record three times at every start (the whole table's pages left in the page cache), and once the current
  // keys had filled the table the previous and leaked ones were left out.
  if (db.statement('SELECT 1 FROM authorization_keys LIMIT 1').get() === undefined) {
    for (const field of ['keyDigest', 'previousKeyDigest', 'leakedKeyDigest']) {
      db.exec(`INSERT OR IGNORE INTO authorization_keys (key_digest, client_id)
        SELECT json_extract(record, '$.${field}'), client_id FROM authorizations WHERE json_extract(record, '$.${field}') IS NOT NULL`);
    }
  }
  db.exec(
    'CREATE TABLE IF NOT EXISTS recipient_account_leaked_keys (key_digest TEXT PRIMARY KEY, account_id TEXT NOT NULL UNIQUE) WITHOUT ROWID',
  );
  // Decision 44: when each active authorization's next expiry notice falls due. A table of its own, as
  // for claim links; made once from the records already there, whose notices are all still to come.
  db.exec('CREATE TABLE IF NOT EXISTS expiry_notices (client_id TEXT PRIMARY KEY, due_ms INTEGER NOT NULL) WITHOUT ROWID');
  db.exec('CREATE INDEX IF NOT EXISTS expiry_notices_due ON expiry_notices (due_ms)');
  // Decision 50: the offers that wait for their account's answer, by account; a row leaves when the offer is answered or ends.
  db.exec(`CREATE TABLE IF NOT EXISTS account_offers (
    account_id TEXT NOT NULL, client_id TEXT NOT NULL UNIQUE, PRIMARY KEY (account_id, client_id)
  ) WITHOUT ROWID`);
  createAccessReviewTables(db);
  db.exec('CREATE TABLE IF NOT EXISTS schema_steps (name TEXT PRIMARY KEY) WITHOUT ROWID');
  db.exec(`INSERT INTO expiry_notices (client_id, due_ms)
    SELECT client_id, expires_ms - ${FIRST_NOTICE_MS} FROM authorizations
    WHERE ended = 0 AND expires_ms IS NOT NULL AND NOT EXISTS (SELECT 1 FROM schema_steps WHERE name = 'expiry_notices')`);
  db.exec("INSERT OR IGNORE INTO schema_steps (name) VALUES ('expiry_notices')");
}

/** Decision 43: the digests a grant is found by, in the same transaction as the record. */
function keepKeys(statement: (sql: string) => StatementSync, record: StoredAuthorization): void {
  statement('DELETE FROM authorization_keys WHERE client_id = ?').run(record.clientId);
  const insert = statement('INSERT OR IGNORE INTO authorization_keys (key_digest, client_id) VALUES (?, ?)');
  for (const digest of [record.keyDigest, record.previousKeyDigest, record.leakedKeyDigest]) {
    if (digest) insert.run(digest, record.clientId);
  }
}

/** Decision 43: the account's last leaked key, so that the same report again finds the account. */
function keepLeakedAccountKey(statement: (sql: string) => StatementSync, account: StoredRecipientAccount): void {
  statement('DELETE FROM recipient_account_leaked_keys WHERE account_id = ?').run(account.accountId);
  if (account.leakedKeyDigest) {
    statement('INSERT OR IGNORE INTO recipient_account_leaked_keys (key_digest, account_id) VALUES (?, ?)').run(
      account.leakedKeyDigest,
      account.accountId,
    );
  }
}

/**
 * The `key_digest` column of an account whose current key a leak report ended (decision 43): the
 * empty string, which no digest equals, as the column predates such accounts and SQLite cannot drop
 * its NOT NULL in place.
 */
function keyColumnOf(account: StoredRecipientAccount): string {
  return account.keyDigest ?? '';
}

/**
 * Records imported from an earlier layout (import-earlier-data.ts) after the tables were made: those
 * with an expiry ahead and no activity yet (so no notice sent) get their first notice's time, unless
 * they have one.
 */
export function indexImportedExpiryNotices(db: { exec(sql: string): void }): void {
  db.exec(`INSERT OR IGNORE INTO expiry_notices (client_id, due_ms)
    SELECT client_id, expires_ms - ${FIRST_NOTICE_MS} FROM authorizations
    WHERE ended = 0 AND expires_ms IS NOT NULL AND json_extract(record, '$.activity') IS NULL`);
}

/** The earliest notice before an expiry (7 days), for the records of an earlier version. */
const FIRST_NOTICE_MS = 7 * 86_400_000;

/** The record's next expiry notice, in the same transaction as the record: none once all are sent or it ended. */
function keepExpiryNotice(statement: (sql: string) => StatementSync, record: StoredAuthorization): void {
  const due = nextExpiryNoticeAt(record);
  if (due === null) statement('DELETE FROM expiry_notices WHERE client_id = ?').run(record.clientId);
  else statement('INSERT OR REPLACE INTO expiry_notices (client_id, due_ms) VALUES (?, ?)').run(record.clientId, Date.parse(due));
}

/** Decision 50: the offer's row while it waits for its account, in the same transaction as the record. */
function keepOffer(statement: (sql: string) => StatementSync, record: StoredAuthorization): void {
  statement('DELETE FROM account_offers WHERE client_id = ?').run(record.clientId);
  const accountId = offerAwaitingAccountOf(record);
  if (accountId) statement('INSERT INTO account_offers (account_id, client_id) VALUES (?, ?)').run(accountId, record.clientId);
}

/** The record's current claim link, in the same transaction as the record: one per authorization, a new one replacing the old. */
function keepClaimLink(statement: (sql: string) => StatementSync, record: StoredAuthorization): void {
  statement('DELETE FROM claim_links WHERE client_id = ?').run(record.clientId);
  if (record.claimTokenDigest) {
    statement('INSERT INTO claim_links (token_digest, client_id) VALUES (?, ?)').run(record.claimTokenDigest, record.clientId);
  }
}

/** The row of a record: the columns the queries select and order by, and the record itself. */
export function columnsOf(record: StoredAuthorization): [string, string, string, number, number | null, number, string] {
  return [
    record.clientId,
    record.organizationId,
    // ISO 8601 in UTC with milliseconds, so text order is time order.
    new Date(record.createdAt).toISOString(),
    record.revision,
    record.expiresAt === null ? null : Date.parse(record.expiresAt),
    record.revokedAt || record.expiredAt ? 1 : 0,
    JSON.stringify(record),
  ];
}

export function addToOutbox(statement: (sql: string) => StatementSync, clientId: string, entries: readonly OutboxEntry[]): void {
  if (entries.length === 0) return;
  const insert = statement('INSERT INTO outbox (client_id, id, topic, key, value) VALUES (?, ?, ?, ?, ?)');
  for (const entry of entries) insert.run(clientId, entry.id, entry.topic, entry.key, entry.value);
}
