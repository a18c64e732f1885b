import type { AccessRecord, AccessResource } from '@rsd/contracts';
import type { AccessLogPosition, DailyReads, RecordUsage } from '@rsd/domain';
import type { AuthorizationStore } from './authorization-store';
import type { Subscription } from './event-log';

/**
 * Where the credentials service keeps the access log it serves (decision 21) and the usage it puts
 * on every authorization (decision 20). Implementations: a SQLite database of its own on the embedded runtime, MongoDB on
 * the distributed one (with a TTL index where the server has them).
 */
export interface AccessLogStore {
  /**
   * Keeps the records. The distributed projection may add a batch again after a crash: a record
   * added twice is listed and counted once there. The embedded store is written once per record,
   * in the order of `at`.
   */
  add(records: readonly AccessRecord[]): Promise<void>;
  /**
   * One Client ID's records, newest first (access-order.ts), strictly beyond `after` when given, and
   * only those every filter given holds for (decision 54).
   */
  page(clientId: string, options: { limit: number; after?: AccessLogPosition; filter?: AccessLogFilter }): Promise<AccessRecord[]>;
  /** Decision 20 for each Client ID asked for; one that never read successfully gets NO_USAGE. */
  usage(clientIds: readonly string[], now: Date): Promise<Map<string, RecordUsage>>;
  /**
   * One Client ID's reads and refusals per UTC day (decision 38's chart), only the days that have
   * any, oldest first; claims are not counted. Summed from the hour buckets, never the records: the
   * hours from the one holding `from` to the last starting before `to`, so a range is whole hours.
   */
  dailyReads(clientId: string, from: Date, to: Date): Promise<DailyReads[]>;
  /** Forgets records older than `before`, and usage buckets too old for any window. A store with a TTL index may leave it to the server. */
  prune(before: Date, now: Date): Promise<void>;
  /** Decision 56: forgets every record and usage count of these Client IDs (an offboarded organization's grants). Idempotent. */
  purgeClients(clientIds: readonly string[]): Promise<void>;
  /** Decision 56: a recipient's erasure: its records stay, each without its client address. Idempotent. */
  eraseAddresses(clientId: string): Promise<void>;
  close(): Promise<void>;
}

/** Decision 54's filters of the access log; instants are UTC ISO strings as the records' `at`. */
export interface AccessLogFilter {
  /** At or after. */
  from?: string;
  /** Strictly before. */
  to?: string;
  /** Statuses from `min` to `max`, both included: one status, or a class (400 to 499). */
  status?: { min: number; max: number };
  /** The client address exactly. */
  address?: string;
  /** One resource (decision 55: the certificates fetched). */
  resource?: AccessResource;
}

export interface AccessLogOptions {
  /** How long the stream and the store keep a record (ACCESS_LOG_RETENTION_DAYS). */
  retentionDays: number;
}

/**
 * The access log's stream, apart from the event store: the read API publishes batches to it, the
 * credentials service reads what reached its store. On the distributed runtime a Kafka topic whose
 * records the credentials service follows into MongoDB; on the embedded runtime publishing writes
 * the store itself (one process), and there is nothing to follow.
 */
export interface AccessLog {
  /** One batch; rejects when the stream cannot take it now (the read API's recorder keeps it and tries again). */
  publish(records: readonly AccessRecord[]): Promise<void>;
  /** The store the credentials service reads; opened once, closed with the access log. */
  openStore(): Promise<AccessLogStore>;
  /**
   * Keeps the store current with what is published from now on, in a consumer group of the store's
   * own, keeping only the records of grants `grants` still holds (decision 56: a read recorded after
   * its organization was purged is not kept); where publishing writes the store itself, there is
   * nothing to follow.
   */
  follow(grants: Pick<AuthorizationStore, 'knownClientIds'>): Promise<Subscription>;
  /**
   * Decision 44: every batch published from now on, once, to `observe` (the credentials service's
   * alerts). A Kafka consumer group of its own on the distributed runtime (a batch may come again
   * after a crash); on the embedded runtime, in process after the batch reached the store (a batch
   * whose observing fails is logged, not retried).
   */
  watch(observe: (records: readonly AccessRecord[]) => Promise<void>): Promise<Subscription>;
  close(): Promise<void>;
}
