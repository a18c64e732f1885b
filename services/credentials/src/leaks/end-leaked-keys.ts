import { ACCOUNT_KEY_PREFIX } from '@rsd/contracts';
import {
  activityOf,
  decideAlerts,
  decideLeakedAccountKey,
  decideLeakedGrantKey,
  digestApiKey,
  hasValidChecksum,
  type LeakLabel,
  type Origin,
} from '@rsd/domain';
import type { UseCaseDeps } from '../authorizations/use-case-deps';
import { runCommand, publishOwedEvents, type Publication } from '@rsd/platform';

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

/** Decision 54: a leak report's changes are the reporter's (the secret-scanning service), whatever route brought it. */
function reporterOf(deps: LeakedKeyDeps): Origin {
  const base = deps.origin ?? { requestId: null, address: null, actor: { type: 'reporter', id: 'secret-scanning', via: 'api' } };
  return { ...base, actor: { type: 'reporter', id: 'secret-scanning', via: base.actor.via ?? 'api' } };
}

async function endGrantKey(deps: LeakedKeyDeps, digest: string): Promise<LeakLabel> {
  const { answer } = await runCommand(deps, reporterOf(deps), {
    what: 'leaked key',
    context: { keyDigest: digest },
    publish: 'none',
    load: () => deps.store.findByKeyDigest(digest),
    decide: (record) => {
      if (!record) return { answer: 'false_positive' as LeakLabel };
      const now = deps.clock.now();
      const decision = decideLeakedGrantKey(record, digest, { id: deps.newEventId(), time: now });
      if (decision.outcome === 'unchanged') return { answer: decision.label };
      // Decision 44: a revoked grant's organization hears of it by the revocation's reason; a previous key
      // that ends alone is an alert of the grant's own, written with it.
      const { record: next, events } = decision.record.revokedAt
        ? { record: decision.record, events: [] }
        : decideAlerts(
            decision.record,
            { activity: activityOf(decision.record), alerts: [{ type: 'authorization.key_leaked', at: now.toISOString() }] },
            () => deps.newEventId(),
          );
      return {
        write: { authorization: next, expectedRevision: record.revision, events: [decision.event, ...events] },
        answer: decision.label,
        written: () =>
          deps.log.warn(
            {
              clientId: record.clientId,
              organizationId: record.organizationId,
              keyDigest: digest,
              ended: decision.record.revokedAt ? 'authorization' : 'previous key',
            },
            'leaked key reported: it no longer works',
          ),
      };
    },
  });
  return answer;
}

async function endAccountKey(deps: LeakedKeyDeps, digest: string): Promise<LeakLabel> {
  const { answer } = await runCommand(deps, reporterOf(deps), {
    what: 'leaked account key',
    context: { keyDigest: digest },
    publish: 'none',
    load: () => deps.store.findAccountByKeyDigest(digest),
    decide: (account) => {
      if (!account) return { answer: 'false_positive' as LeakLabel };
      const decision = decideLeakedAccountKey(account, digest, { id: deps.newEventId(), time: deps.clock.now() });
      if (decision.outcome === 'unchanged') return { answer: decision.label };
      return {
        write: { account: decision.record, expectedRevision: account.revision, events: [decision.event] },
        answer: decision.label,
        written: () =>
          deps.log.warn({ accountId: account.accountId, keyDigest: digest }, 'leaked account key reported: it no longer works'),
      };
    },
  });
  return answer;
}
