import type { AuditAction, AuthorizationEvent } from '@rsd/contracts';
import { withAudit, type Origin, type StoredAccessReview, type StoredAuthorization, type StoredRecipientAccount } from '@rsd/domain';
import type { Logger } from './logger';
import { outboxEntryOf } from './outbox-entry';
import { publishOwedEvents, type OutboxRelay, type Publication } from './outbox-relay';
import { serviceUnavailable } from './service-unavailable';
import type { AuthorizationStore, Clock } from '@rsd/ports';

/*
 * The one shape every change to the authorization store goes through (the credentials service's): load the record, let the
 * domain decide (libs/domain, no I/O), write the next record with its events at the revision read
 * (the outbox owes them to the event log in the same write), read and decide again when a concurrent
 * change won, then wait for the relay to publish. Who asked (decision 54) is written into the events here.
 */

export interface CommandDeps {
  store: Pick<AuthorizationStore, 'create' | 'update' | 'createAccount' | 'updateAccount' | 'createReview' | 'updateReview'>;
  relay: Pick<OutboxRelay, 'flush'>;
  log: Logger;
  /** How long a write waits for the event log to take its events before answering that enforcement is pending. */
  publishDeadlineMs?: number;
}

/** What a decision writes: a grant, an account or an access review, new (`expectedRevision: null`) or at the revision it was read at. */
export type Write =
  | { authorization: StoredAuthorization; expectedRevision: number | null; events: readonly AuthorizationEvent[] }
  | { account: StoredRecipientAccount; expectedRevision: number | null; events: readonly AuthorizationEvent[] }
  | { review: StoredAccessReview; expectedRevision: number | null; events: readonly AuthorizationEvent[] };

/** A decision: what to write, if anything, and the command's answer once it is written. */
export interface Decided<T> {
  write?: Write;
  answer: T;
  /** Told once the write won (to log the change): never for a write that lost and is decided again. */
  written?: () => void;
}

export interface Command<Loaded, T> {
  /** For the log when the command keeps losing: what it is, and about which record. */
  what: string;
  context: object;
  load(): Promise<Loaded>;
  /** The domain's decision on what was loaded; throwing refuses the command (nothing is written). */
  decide(loaded: Loaded): Decided<T> | Promise<Decided<T>>;
  /** Names the change where its event alone does not (an offer accepted is a grant joining an account). */
  action?: AuditAction;
  /**
   * `deadline` (the default): after the write, wait up to the deadline for the relay to publish what is
   * owed, whether or not this command wrote anything (an earlier change may still be owed). `none`: the
   * caller publishes, once for many commands.
   */
  publish?: 'deadline' | 'none';
  /** Loads and decisions before giving up; default MAX_ATTEMPTS. */
  attempts?: number;
  /** What to answer after the last lost attempt; default a 503 (try again) having changed nothing. */
  exhausted?: () => T;
}

export interface Outcome<T> {
  answer: T;
  /** Undefined when the command publishes nothing itself (`publish: 'none'`). */
  publication: Publication | undefined;
}

/** Enough for a change racing the expiry scheduler or another change; more means something is wrong. */
export const MAX_ATTEMPTS = 5;

/**
 * Who made a change: known before the record is loaded, or only from it (a claim link's holder is the
 * recipient of the grant the link names). Undefined: a change no one is recorded as making (a
 * recipient account's own settings, which are in no event).
 */
export type OriginOf<Loaded> = Origin | ((loaded: Loaded) => Origin) | undefined;

/** Runs one command for `origin`. */
export async function runCommand<Loaded, T>(deps: CommandDeps, origin: OriginOf<Loaded>, command: Command<Loaded, T>): Promise<Outcome<T>> {
  const attempts = command.attempts ?? MAX_ATTEMPTS;
  for (let tries = 1; tries <= attempts; tries += 1) {
    const loaded = await command.load();
    const decided = await command.decide(loaded);
    const who = typeof origin === 'function' ? origin(loaded) : origin;
    if (decided.write) {
      if (!(await write(deps, decided.write, who, command.action))) continue;
      decided.written?.();
    }
    return { answer: decided.answer, publication: await publish(deps, command) };
  }
  if (command.exhausted) return { answer: command.exhausted(), publication: undefined };
  deps.log.warn({ ...command.context, attempts }, `${command.what} kept losing to concurrent changes`);
  throw serviceUnavailable('The authorization is being changed concurrently; try again');
}

/** False when another change won the record since it was read. */
async function write(deps: CommandDeps, change: Write, origin: Origin | undefined, action: AuditAction | undefined): Promise<boolean> {
  const outbox = change.events.map((event) => outboxEntryOf(origin ? withAudit(event, origin, action) : event));
  if ('authorization' in change) {
    if (change.expectedRevision === null) {
      await deps.store.create(change.authorization, outbox);
      return true;
    }
    return deps.store.update(change.authorization, change.expectedRevision, outbox);
  }
  if ('review' in change) {
    if (change.expectedRevision === null) {
      await deps.store.createReview(change.review, outbox);
      return true;
    }
    return deps.store.updateReview(change.review, change.expectedRevision, outbox);
  }
  if (change.expectedRevision === null) {
    await deps.store.createAccount(change.account, outbox);
    return true;
  }
  return deps.store.updateAccount(change.account, change.expectedRevision, outbox);
}

function publish(deps: CommandDeps, command: Command<unknown, unknown>): Promise<Publication | undefined> {
  if (command.publish === 'none') return Promise.resolve(undefined);
  return publishOwedEvents(deps.relay, deps.log, deps.publishDeadlineMs);
}

/**
 * One attempt on a record as a scheduler's page found it, published with the rest of the pass: a lost
 * race answers false, and the next pass finds the record again if it is still due.
 */
export async function attemptOnce<Loaded>(
  deps: CommandDeps,
  origin: OriginOf<Loaded>,
  loaded: Loaded,
  command: Pick<Command<Loaded, boolean>, 'what' | 'context' | 'decide'>,
): Promise<boolean> {
  const attempt = { ...command, publish: 'none', attempts: 1, exhausted: () => false, load: () => Promise.resolve(loaded) } as const;
  return (await runCommand(deps, origin, attempt)).answer;
}

/** What a scheduler of changes to the authorization store needs (the expiry check, access reviews' due times). */
export interface SchedulerDeps {
  store: AuthorizationStore;
  relay: Pick<OutboxRelay, 'flush'>;
  clock: Clock;
  log: Logger;
  newEventId?: () => string;
  /** Decision 52, where replicas share the store: whether this replica holds the lease the passes run under (the relay's). */
  isLeader?: () => boolean;
}
