import type { DomainEvent } from '@rsd/contracts';

/**
 * A record as an event, or why it is not one (parseRecord's answer), or an event erased (decision 56):
 * its organization's key is destroyed, so nothing of it can be read and every consumer passes it by.
 * An event whose recipient alone is erased is still an event, its recipient's fields at their
 * erased form (a name null, an address left out), and names the erased subjects.
 */
export type ParsedRecord = { event: DomainEvent; erasedSubjects?: readonly string[] } | { reason: string } | { erased: ErasedEvent };

/** An event whose organization is erased: what stays in clear of it, for a consumer's log line. */
export interface ErasedEvent {
  type: string;
  id: string;
  /** The erased subject (`organization:<id>`). */
  subject: string;
}

/** A record to append: its key decides its partition, so records of one key keep their order. */
export interface OutgoingRecord {
  key: string;
  /** Serialized JSON; the log never interprets it. */
  value: string;
}

export interface EventRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  /** The value as written; a consumer must validate it, since anyone with access to a topic can write to it. */
  value: string;
  /**
   * `parseRecord`'s answer for this record, deep-frozen, when the log parsed it once for every
   * consumer of its process (the embedded log); `parseRecord` returns it instead of parsing again.
   */
  readonly parsed?: ParsedRecord;
  /**
   * The value with its sealed fields opened (decision 56), when the log opened it: for the readers
   * that parse a kind of event `parsed` does not hold (the notifier's webhook changes). `value` stays
   * as written.
   */
  readonly opened?: string;
}

export interface SubscribeOptions {
  /** Consumers that share a group id share the work and the committed position. */
  groupId: string;
  topics: readonly string[];
  /** Where a group with no committed position starts. */
  fromBeginning: boolean;
  /** Called once per record, in order per partition; the position is committed only after it resolves. */
  handle(record: EventRecord): Promise<void>;
  /**
   * Optional: the records of one partition that arrived together, in order, handled as one unit (a
   * failure hands them all over again). A log that fetches in batches (Kafka) calls it instead of
   * `handle`; it must have the effect of `handle` on each record in turn.
   */
  handleBatch?(records: readonly EventRecord[]): Promise<void>;
  /**
   * A live-only follower whose position need not survive it: nothing is committed and the group
   * is deleted when the subscription closes. Logs that store no positions ignore it.
   */
  ephemeral?: boolean;
  /**
   * Keep `freshAsOf()` and `behindSince()` current by reading the log's ends four times a second: for followers whose readers
   * must not be served from a copy the log has left behind (decision 29).
   */
  trackFreshness?: boolean;
  /**
   * An in-process log makes `append` wait until its live subscribers have handled the records, so a
   * client reads its own write (a new key works at once). These are the topics whose appends wait
   * for this subscription; default: all it follows. The notifier names only the authorizations: a
   * recipient may subscribe with a key the moment it is issued, but a score's 202 does not wait for
   * its webhooks. Logs in other processes (Kafka) never wait for subscribers.
   */
  awaitedOn?: readonly string[];
}

export interface Subscription {
  /** Resolves once every record that was in the log when the subscription started has been handled. */
  readonly caughtUp: Promise<void>;
  /**
   * The latest instant at which the subscription is known to have handled every record then in its
   * topics; undefined until known. Only kept with `trackFreshness`; an in-process log, which cannot
   * be out of reach, answers the present.
   */
  freshAsOf(): Date | undefined;
  /**
   * When the oldest reading of the log's ends that the subscription has not reached was taken:
   * how long it has been behind a log it can reach. Undefined when it is level (or not tracked).
   */
  behindSince(): Date | undefined;
  close(): Promise<void>;
}

/**
 * The event log: an append-only, durable, keyed log split into topics.
 * Records with the same key keep their order; offsets grow within a partition.
 * Implementations: embedded (file-backed, in-process) and Kafka.
 */
export interface EventLog {
  /** Resolves only once every record is durably written: callers may then acknowledge their own client. */
  append(topic: string, records: readonly OutgoingRecord[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  close(): Promise<void>;
}
