import type { Origin } from '@rsd/domain';
import type { Logger, OutboxRelay } from '@rsd/platform';
import type { AccessLogStore, AuthorizationStore, Clock } from '@rsd/ports';

/** What the authorization use cases need; every source of time and randomness is passed in. */
export interface UseCaseDeps {
  store: AuthorizationStore;
  /** Decision 20: every answer carries the authorization's use, read from the access log's counters. */
  usage: Pick<AccessLogStore, 'usage'>;
  relay: Pick<OutboxRelay, 'flush'>;
  clock: Clock;
  log: Logger;
  /** How long a write waits for the event log to take its event before answering that enforcement is pending. */
  publishDeadlineMs: number;
  newEventId(): string;
  /**
   * Decision 54: who asks for the change, written into its events by the command runner. The routes
   * set it per request; absent, the change is written without an actor.
   */
  origin?: Origin;
}

export interface CredentialGenerator {
  clientId(): string;
  apiKey(): string;
  /** Decision 38's one-time link token. */
  claimToken(): string;
}
