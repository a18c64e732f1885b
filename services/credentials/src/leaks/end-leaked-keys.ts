import {
  decideLeakedAccountKey,
  decideLeakedGrantKeyWithAlert,
  digestApiKey,
  leakedKeyKindOf,
  leakReporterOrigin,
  type LeakLabel,
} from '@rsd/domain';
import type { UseCaseDeps } from '../authorizations/use-case-deps';
import { runCommand, publishOwedEvents, type Publication, type Write } from '@rsd/platform';

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
    const kind = leakedKeyKindOf(token, deps.apiKeyPrefix);
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

/**
 * One reported key's holder (`load`: by the key's digest) changed as `decide` says, at the revision it
 * was read at, by the reporter; a key no one holds is a false positive. Published with the whole report.
 */
async function endKey<Holder>(
  deps: LeakedKeyDeps,
  digest: string,
  what: string,
  /** The holder of the key whose digest it is given. */
  find: (digest: string) => Promise<Holder | undefined>,
  decide: (holder: Holder) => { label: LeakLabel; write?: Write; logged?: [object, string] },
): Promise<LeakLabel> {
  const { answer } = await runCommand(deps, leakReporterOrigin(deps.origin), {
    what,
    context: { keyDigest: digest },
    publish: 'none',
    load: () => find(digest),
    decide: (holder) => {
      if (holder === undefined) return { answer: 'false_positive' as LeakLabel };
      const { label, write, logged } = decide(holder);
      return { answer: label, ...(write ? { write } : {}), ...(logged ? { written: () => deps.log.warn(...logged) } : {}) };
    },
  });
  return answer;
}

function endGrantKey(deps: LeakedKeyDeps, digest: string): Promise<LeakLabel> {
  return endKey(deps, digest, 'leaked key', deps.store.findByKeyDigest.bind(deps.store), (record) => {
    const stamp = { id: deps.newEventId(), time: deps.clock.now() };
    const decision = decideLeakedGrantKeyWithAlert(record, digest, stamp, () => deps.newEventId());
    if (decision.outcome === 'unchanged') return { label: decision.label };
    const { clientId, organizationId } = record;
    const ended = decision.record.revokedAt ? 'authorization' : 'previous key';
    return {
      label: decision.label,
      write: { authorization: decision.record, expectedRevision: record.revision, events: decision.events },
      logged: [{ clientId, organizationId, keyDigest: digest, ended }, 'leaked key reported: it no longer works'],
    };
  });
}

function endAccountKey(deps: LeakedKeyDeps, digest: string): Promise<LeakLabel> {
  return endKey(deps, digest, 'leaked account key', deps.store.findAccountByKeyDigest.bind(deps.store), (account) => {
    const decision = decideLeakedAccountKey(account, digest, { id: deps.newEventId(), time: deps.clock.now() });
    if (decision.outcome === 'unchanged') return { label: decision.label };
    return {
      label: decision.label,
      write: { account: decision.record, expectedRevision: account.revision, events: [decision.event] },
      logged: [{ accountId: account.accountId, keyDigest: digest }, 'leaked account key reported: it no longer works'],
    };
  });
}
