import type { ViewDefinition } from '@rsd/domain';
import type { AccessLog, AccessLogOptions } from './access-log';
import type { AuditLogStore } from './audit-log-store';
import type { AuthorizationStore } from './authorization-store';
import type { Clock } from './clock';
import type { EventLog } from './event-log';
import type { LeaseStore } from './lease-store';
import type { OffboardingStore } from './offboarding-store';
import type { SubjectKeyStore, SubjectKeyWrapping } from './subject-key-store';
import type { RateLimitStoreFactory } from './rate-limit-store';
import type { ViewStore } from './view-store';
import type { WebhookStore } from './webhook-store';

/** A dependency or condition a service needs before it should take traffic. Throws when not met. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

/**
 * What a service runs on, whichever runtime was chosen: everything it asks for comes opened and
 * already fit for that runtime, so no service tells one runtime from another. Opened lazily: a
 * service asks only for what it uses, and the adapters it never asks for are never loaded.
 */
export interface Runtime {
  eventLog: EventLog;
  openAuthorizationStore(): Promise<AuthorizationStore>;
  /** Decision 54: the audit trail's view, beside the authorizations (the credentials service keeps it). */
  openAuditLogStore(): Promise<AuditLogStore>;
  /**
   * The consumer group that fills that view from the log: one per place the view is kept (a database),
   * so that a new place is made from the log's beginning and two deployments sharing a Kafka cluster
   * never split one view's partitions between them.
   */
  auditFeedGroup: string;
  /** Decision 56: the offboardings' records, beside the authorizations (the credentials service keeps them). */
  openOffboardingStore(): Promise<OffboardingStore>;
  /** Decision 56: the data subjects' keys, apart from the event log; one store per process. */
  openSubjectKeyStore(): Promise<SubjectKeyStore>;
  /** Decision 56: the master keys' view of the stored keys (the key store's backups, a rotation). */
  subjectKeyWrapping: SubjectKeyWrapping;
  /**
   * Decision 56: the consumer group of the credentials service's erasure feed (its own purges, and the
   * other services' word of theirs), per database as `auditFeedGroup` is.
   */
  erasureFeedGroup: string;
  /** The views a service keeps for itself, in the place the runtime gives that owner. */
  openViews(owner: ViewsOwner, views: readonly ViewDefinition<unknown>[]): Promise<Views>;
  /** `onFallback` is told when counting falls back to this replica alone and when it is shared again. */
  rateLimitStores(onFallback?: (active: boolean) => void): Promise<RateLimitStoreFactory>;
  /** The notifier's subscriptions, queue and attempts. */
  openWebhookStore(): Promise<WebhookStore>;
  /**
   * Decision 52: the leases the service's replicas share its one-at-a-time work by (the notifier's
   * queue shards, the credentials service's relay). Absent where one process does all the work (the
   * embedded runtime): nothing is shared, so nothing needs a lease.
   */
  openLeaseStore?: (owner: LeaseOwner) => Promise<LeaseStore>;
  /** Dependencies that must answer before the service takes traffic. */
  readiness(): ReadinessCheck[];
  /** Records a consumer group has not handled yet; undefined where the log has no such notion. */
  consumerLag(groupId: string): Promise<number | undefined>;
  /**
   * The access log's stream, apart from the event log: the read API publishes to it and the
   * credentials service reads its store. One per process: in one process the two share it.
   */
  openAccessLog(options: AccessLogOptions): Promise<AccessLog>;
}

/** Whose leases: each service's are kept in its own database. */
export type LeaseOwner = 'credentials' | 'notifier';

/** Whose views: each owner's are kept apart, and a projection's position belongs to its owner's views. */
export type ViewsOwner = 'read-views' | 'notifier';

export interface Views {
  /** The store the owner's projections write and its handlers read. */
  store: ViewStore;
  /** Where they live, for people: the database or namespace's name. */
  place: string;
  /**
   * The consumer group of a projection writing these views: `base` joined to where they live, so that
   * views kept elsewhere (a new database) start again from the beginning of the log.
   */
  groupId: (base: string) => string;
  /**
   * The views as a request handler reads them: the store itself where this process writes them alone;
   * where other processes write them too, a cache that a change feed of this reader's own keeps
   * current, and that says when it has been out of touch for too long.
   */
  reader: (options: ViewReaderOptions) => Promise<ViewReader>;
}

export interface ViewReaderOptions {
  /** This reader's name among the readers of the same views (a replica's), for its change feed. */
  readerId: string;
  clock: Clock;
  /** How long a cached document is served without asking the store again. */
  cacheTtlMs: number;
  staleness: StalenessBounds;
}

export interface ViewReader {
  views: ViewStore;
  staleness: FeedStaleness;
  /** Fails while the reader is stale; none where it cannot be. */
  readiness: ReadinessCheck[];
  stop(): Promise<void>;
}

/**
 * Decision 29: a reader whose change feed has lost the event log must stop answering from its copy
 * once the copy may be older than the bound, or a revocation recorded meanwhile would be outlived.
 * The feed's freshness is the last time it is known to have held everything the log held.
 */
export interface FeedStaleness {
  /** How long the reader's copy may have lagged the log at `now`. */
  staleForMs(now: Date): number;
  isStale(now: Date): boolean;
}

export interface StalenessBounds {
  /** Out of touch for longer than this: stale. */
  boundMs: number;
  /**
   * In touch but behind a reading of the log's ends for longer than this: stale too. A revocation
   * answered 200 is in the log, so a reader that reaches the log but has not caught up with it
   * (just after an outage, say) would otherwise serve the revoked key past the 1 s promise.
   */
  lagBoundMs: number;
  /**
   * Back in touch, a reader stays stale until it is fresh as of this long after its first new
   * reading of the log: a revocation recorded during the outage reaches the log only when the
   * credentials service's outbox relay gets to it, a moment after the log returns.
   */
  recoveryGraceMs: number;
}
