/**
 * The access log's order (decision 21): newest first by `at`, then by `requestId`, then by the
 * record's own `id`, all descending. Request ids come from callers and may repeat, so only the id
 * makes a position unique, and a page that ends at a position is followed by exactly what is older.
 * Instants are ISO strings in one fixed form and ids ASCII: string order is the order every store uses.
 */
export interface AccessLogPosition {
  at: string;
  requestId: string;
  id: string;
}

export function newestFirst(a: AccessLogPosition, b: AccessLogPosition): number {
  if (a.at !== b.at) return a.at > b.at ? -1 : 1;
  if (a.requestId !== b.requestId) return a.requestId > b.requestId ? -1 : 1;
  if (a.id !== b.id) return a.id > b.id ? -1 : 1;
  return 0;
}

/** True when `record` comes after `position` in newest-first order: it belongs to the next page. */
export function isBeyond(record: AccessLogPosition, position: AccessLogPosition): boolean {
  return newestFirst(record, position) > 0;
}
