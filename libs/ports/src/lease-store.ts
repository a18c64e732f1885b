import type { LeaseEpoch } from '@rsd/domain';

/**
 * Decision 52: where replicas keep the leases on work one of them at a time must do. Each group (a
 * service's piece of work: the webhook queue's shards, the credentials service's relay) is apart.
 * Every promise rests on one atomic step that MongoDB and FerretDB both give: an insert under a unique
 * key. No conditional update is relied on (FerretDB applies one as a read and a rewrite).
 */
export interface LeaseStore {
  /** The newest epoch of each name of the group, and the replicas alive at `now`. */
  read(group: string, now: Date): Promise<{ latest: Map<string, LeaseEpoch>; members: string[] }>;
  /** Inserts the epoch unless one with its name and fence exists: true when this call wrote it. */
  claim(group: string, epoch: LeaseEpoch): Promise<boolean>;
  /** Moves `until` (and `released`) of epochs the caller holds; only their holder ever writes them. */
  renew(group: string, owner: string, epochs: readonly { name: string; fence: number }[], until: string, released?: boolean): Promise<void>;
  /** Says this replica is alive until `until` (the share of each counts the replicas alive). */
  heartbeat(group: string, member: string, until: string): Promise<void>;
  close(): Promise<void>;
}
