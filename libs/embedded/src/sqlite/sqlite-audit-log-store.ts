import type { AuditRecord } from '@rsd/contracts';
import type { AuditFilter, AuditLogStore, AuditPosition } from '@rsd/ports';
import { text } from './database';
import { openStoreDatabase } from './store-database';

/**
 * Decision 54's audit view in the embedded database: a row per event that recorded a change, the
 * entry as JSON and the columns its filters use. Pages are read by the organization's index, newest
 * first; every filter is a column, so a page never reads what it does not answer.
 */
export function openSqliteAuditLogStore(options: { file: string }): AuditLogStore {
  const { statement, read, write, changeSoon, close } = openStoreDatabase(options.file, 'the audit log store', (db) =>
    db.exec(`CREATE TABLE IF NOT EXISTS audit_log (
        event_id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL,
        at TEXT NOT NULL,
        action TEXT NOT NULL,
        actor_type TEXT NOT NULL,
        actor_id TEXT NOT NULL,
        client_id TEXT,
        record TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS audit_log_by_organization ON audit_log (organization_id, at DESC, event_id DESC);
      CREATE INDEX IF NOT EXISTS audit_log_by_time ON audit_log (at);`),
  );
  return {
    add(records) {
      if (records.length === 0) return Promise.resolve();
      // Without waiting for a sync of its own, as a view's write: the trail is the log's projection, and
      // its group's position is saved in a later commit of the same write-ahead log, so a power cut that
      // takes these rows takes the position with them and the log gives them again. Waited on, each
      // create's entry was a third sync of the database, in the line of every write behind it.
      return changeSoon(() => {
        const insert = statement(
          `INSERT INTO audit_log (event_id, organization_id, at, action, actor_type, actor_id, client_id, record)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
        );
        for (const record of records) {
          insert.run(
            record.eventId,
            record.organizationId,
            record.at,
            record.action,
            record.actor.type,
            record.actor.id,
            record.clientId,
            JSON.stringify(record),
          );
        }
      });
    },
    page(filter, { limit, after }) {
      const { sql, values } = auditPageQuery(filter, after);
      return read(() =>
        statement(sql)
          .all(...values, limit)
          .map((row) => JSON.parse(text(row.record)) as AuditRecord),
      );
    },
    purgeOrganization(organizationId) {
      return write(() => {
        statement('DELETE FROM audit_log WHERE organization_id = ?').run(organizationId);
      });
    },
    eraseAddresses(organizationId, clientId) {
      return write(() => {
        statement(
          `UPDATE audit_log SET record = json_set(record, '$.address', NULL)
           WHERE organization_id = ? AND client_id = ? AND json_extract(record, '$.address') IS NOT NULL`,
        ).run(organizationId, clientId);
      });
    },
    prune(before) {
      // By the time index: an hourly pass deletes the hour's entries that have come of age, not a scan.
      return write(() => {
        statement('DELETE FROM audit_log WHERE at < ?').run(before.toISOString());
      });
    },
    close,
  };
}

/** A page's read (its `LIMIT ?` bound last): the organization's range of the index, beyond `after` when given. */
export function auditPageQuery(filter: AuditFilter, after?: AuditPosition): { sql: string; values: string[] } {
  const { where, values } = whereOf(filter);
  if (after) {
    // A row value, which SQLite reads as one range of the index; an OR of two conditions would scan from its top every page.
    where.push('(at, event_id) < (?, ?)');
    values.push(after.at, after.eventId);
  }
  return { sql: `SELECT record FROM audit_log WHERE ${where.join(' AND ')} ORDER BY at DESC, event_id DESC LIMIT ?`, values };
}

function whereOf(filter: AuditFilter): { where: string[]; values: string[] } {
  const where = ['organization_id = ?'];
  const values = [filter.organizationId];
  const add = (clause: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(clause);
    values.push(value);
  };
  add('at >= ?', filter.from);
  add('at < ?', filter.to);
  add('action = ?', filter.action);
  add('client_id = ?', filter.clientId);
  if (filter.actor !== undefined) {
    where.push('(actor_id = ? OR actor_type = ?)');
    values.push(filter.actor, filter.actor);
  }
  return { where, values };
}
