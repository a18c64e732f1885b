import { ACCOUNT_KEY_PREFIX } from '@rsd/contracts';
import {
  activityOf,
  decideAlerts,
  decideLeakedAccountKey,
  decideLeakedGrantKey,
  digestApiKey,
  hasValidChecksum,
  type LeakLabel,
} from '@rsd/domain';
import { LOST_TO_A_CONCURRENT_CHANGE, retryOnConflict } from '../authorizations/retry-on-conflict';
import type { UseCaseDeps } from '../authorizations/use-case-deps';
import { outboxEntryOf } from '../outbox/outbox-entry';
import { publishOwedEvents, type Publication } from '../outbox/outbox-relay';

export interface LeakedKeyDeps extends UseCaseDeps {
  /** Decision 5's prefix of grant keys (API_KEY_PREFIX); account keys have decision 42's. */
  apiKeyPrefix: string;
}

export interface LeakReportOutcome {
  /** One per reported token, in the report's order. */
  labels: LeakLabel[];
  /**
   * Decision 29, as for a revocation: `published` once every change the report made (or an earlier
   * report of the same keys left owed) is in the event log; `pending` when the log did not take it in time.
   */
  publication: Publication;
}

/**
 * Decision 43: every reported token that is a well-formed key of this product (its prefix and
 * checksum, checked without a lookup) and matches a live key ends that key: a grant's current key
 * revokes the grant (`key_leaked`); a rotation's previous key, or an account key, ends alone. Reports
 * are idempotent: a key an earlier report ended is labelled `true_positive` again and changes nothing.
 * Only the key's SHA-256 is ever looked up, logged or stored. The answer waits for the event log as a
 * revocation's does.
 */
export async function endLeakedKeys(deps: LeakedKeyDeps, tokens: readonly string[]): Promise<LeakReportOutcome> {
  const labels: LeakLabel[] = [];
  const seen = new Map<string, LeakLabel>();
  for (const token of tokens) {
    const kind = keyKindOf(token, deps.apiKeyPrefix);
    if (!kind) {
      labels.push('false_positive');
      continue;
    }
    const digest = digestApiKey(token);
    let label = seen.get(digest);
    if (label === undefined) {
      label = kind === 'grant' ? await endGrantKey(deps, digest) : await endAccountKey(deps, digest);
      seen.set(digest, label);
    }
    labels.push(label);
  }
  // Asked whatever the labels: an earlier report's change may still be owed, as a repeated revoke asks again.
  const publication = await publishOwedEvents(deps.relay, deps.log, deps.publishDeadlineMs);
  return { labels, publication };
}

function keyKindOf(token: string, apiKeyPrefix: string): 'grant' | 'account' | undefined {
  if (hasValidChecksum(token, apiKeyPrefix)) return 'grant';
  if (hasValidChecksum(token, ACCOUNT_KEY_PREFIX)) return 'account';
  return undefined;
}

function endGrantKey(deps: LeakedKeyDeps, digest: string): Promise<LeakLabel> {
  return retryOnConflict(
    async () => {
      const record = await deps.store.findByKeyDigest(digest);
      if (!record) return 'false_positive';
      const now = deps.clock.now();
      const decision = decideLeakedGrantKey(record, digest, { id: deps.newEventId(), time: now });
      if (decision.outcome === 'unchanged') return decision.label;
      // Decision 44: a revoked grant's organization hears of it by the revocation's reason; a previous key
      // that ends alone is an alert of the grant's own, written with it.
      const { record: next, events } = decision.record.revokedAt
        ? { record: decision.record, events: [] }
        : decideAlerts(
            decision.record,
            { activity: activityOf(decision.record), alerts: [{ type: 'authorization.key_leaked', at: now.toISOString() }] },
            () => deps.newEventId(),
          );
      const outbox = [decision.event, ...events].map(outboxEntryOf);
      if (!(await deps.store.update(next, record.revision, outbox))) return LOST_TO_A_CONCURRENT_CHANGE;
      deps.log.warn(
        {
          clientId: record.clientId,
          organizationId: record.organizationId,
          keyDigest: digest,
          ended: decision.record.revokedAt ? 'authorization' : 'previous key',
        },
        'leaked key reported: it no longer works',
      );
      return decision.label;
    },
    { log: deps.log, what: 'leaked key', context: { keyDigest: digest } },
  );
}

function endAccountKey(deps: LeakedKeyDeps, digest: string): Promise<LeakLabel> {
  return retryOnConflict(
    async () => {
      const account = await deps.store.findAccountByKeyDigest(digest);
      if (!account) return 'false_positive';
      const decision = decideLeakedAccountKey(account, digest, { id: deps.newEventId(), time: deps.clock.now() });
      if (decision.outcome === 'unchanged') return decision.label;
      if (!(await deps.store.updateAccount(decision.record, account.revision, [outboxEntryOf(decision.event)]))) {
        return LOST_TO_A_CONCURRENT_CHANGE;
      }
      deps.log.warn({ accountId: account.accountId, keyDigest: digest }, 'leaked account key reported: it no longer works');
      return decision.label;
    },
    { log: deps.log, what: 'leaked account key', context: { keyDigest: digest } },
  );
}
