/**
 * Decision 52: work that one replica at a time must do (a shard of the webhook queue, the credentials
 * service's outbox relay and expiry check) is held under a lease. A lease is a chain of epochs: epoch
 * `fence` of a name is written once, by whoever inserts it first (the store's unique key decides), and
 * only its holder moves its `until` on. The fence grows by one at every change of holder, so a write
 * carrying an older fence than the one the work last saw is a write of a replica that lost the lease.
 */
export interface LeaseEpoch {
  name: string;
  /** 1 for the first holder, one more at every change of holder. */
  fence: number;
  owner: string;
  /** ISO instant: until then no other replica takes it. */
  until: string;
  /** Given up by its holder (it finished its work first), rather than lost: a takeover of it repeats nothing. */
  released?: boolean;
}

/** What this replica holds: its epoch of each name, and until when (by its own clock) it may act on it. */
export interface HeldLease {
  fence: number;
  /** Epoch's `until` as last written and acknowledged, less the margin for clock skew between replicas. */
  trustedUntil: number;
}

export interface LeaseTiming {
  /** How long an epoch lasts unrenewed: a lost holder's work moves within this and one renewal interval. */
  ttlMs: number;
  /** Allowed difference between replicas' clocks: a holder stops acting this long before the `until` others see. */
  skewMarginMs: number;
}

/** The shares of a set of names between the replicas alive: as even as can be, the first ones one more. */
export function leaseShare(names: number, members: number): number {
  return Math.ceil(names / Math.max(1, members));
}

export interface LeasePlanInput {
  now: number;
  /** Every name to be held by someone, in a stable order. */
  names: readonly string[];
  /** The newest epoch of each name in the store; absent: never held. */
  latest: ReadonlyMap<string, LeaseEpoch>;
  /** What this replica holds, as it knows it. */
  held: ReadonlyMap<string, HeldLease>;
  /** How many replicas are alive (this one included). */
  members: number;
  /**
   * How long a name may stay expired before a replica that already has its share takes it anyway: the
   * replicas' counts of one another can disagree for a moment, and no name may be left without a holder.
   */
  orphanGraceMs: number;
}

export interface LeasePlan {
  /** Held and still trusted: their epochs' `until` is moved on. */
  renew: string[];
  /** Held but past trusting (a renewal was not acknowledged in time): given up at once, not worked. */
  lost: string[];
  /** Over this replica's share: finished, then released for a replica with fewer. */
  release: string[];
  /** Free to take: this replica tries to insert the next epoch of each. */
  claim: { name: string; fence: number; previous: LeaseEpoch | undefined }[];
}

/**
 * One round of a replica's leases, decided from what the store says and the time: keep what it holds
 * while it can trust it, give back what is over its share, and take what is free up to its share (and
 * an orphan past its grace beyond it). Pure: the keeper does the reads and writes.
 */
export function planLeases(input: LeasePlanInput): LeasePlan {
  const { now, names, latest, held, members, orphanGraceMs } = input;
  const renew: string[] = [];
  const lost: string[] = [];
  for (const name of names) {
    const mine = held.get(name);
    if (!mine) continue;
    const newest = latest.get(name);
    // Trusted only while the last acknowledged `until` (less the skew margin) is ahead, and no later epoch exists.
    if (mine.trustedUntil > now && (newest === undefined || newest.fence === mine.fence)) renew.push(name);
    else lost.push(name);
  }
  const share = leaseShare(names.length, members);
  const release = renew.length > share ? renew.slice(share) : [];
  const keep = renew.length - release.length;
  const claim: LeasePlan['claim'] = [];
  for (const name of names) {
    if (held.has(name)) continue;
    const newest = latest.get(name);
    const expiredFor = newest === undefined ? Number.POSITIVE_INFINITY : now - Date.parse(newest.until);
    if (expiredFor < 0) continue;
    const underShare = keep + claim.length < share;
    if (underShare || expiredFor >= orphanGraceMs) claim.push({ name, fence: (newest?.fence ?? 0) + 1, previous: newest });
  }
  return { renew: renew.slice(0, keep), lost, release, claim };
}

/**
 * Whether taking over from `previous` may repeat some of its work: its holder was another replica
 * that did not release it (it was lost, so what it had under way may be done again).
 */
export function isTakeover(previous: LeaseEpoch | undefined, me: string): boolean {
  return previous !== undefined && previous.owner !== me && previous.released !== true;
}

/** The names of `count` shards of a piece of work: `<prefix>0` … `<prefix>{count − 1}`. */
export function shardNames(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`);
}
