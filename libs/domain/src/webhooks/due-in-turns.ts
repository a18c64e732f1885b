/**
 * How many deliveries of one owner take their turns among the other owners' in a batch of the queue:
 * an owner with this many due or fewer never waits behind another owner's backlog; an owner with more
 * sends the rest of its queue, oldest first, with whatever room the others leave in that batch.
 */
export const TURNS_PER_OWNER = 4;

/** What the turns are taken from: a queued delivery's key (its place in the queue, after its due time) and its owner. */
export interface QueuedForOwner {
  key: string;
  /** The webhook owner's key (`webhookOwnerKey`): a grant's Client ID, `account:…`, `organization:…`. */
  clientId: string;
}

/** The two reads a store answers, each an index range in the order of the queue (due time, then key). */
export interface DueReads<T extends QueuedForOwner> {
  /** Up to `count` due deliveries after `after` (from the start when undefined), none of an owner in `skippedOwners`. */
  next(after: T | undefined, skippedOwners: readonly string[], count: number): Promise<T[]>;
  /** Up to `count` due deliveries of the owners in `owners`, none of the keys in `skippedKeys`. */
  more(owners: readonly string[], skippedKeys: readonly string[], count: number): Promise<T[]>;
}

/**
 * Decision 50: up to `limit` due deliveries, fair between owners. They come in turns: each owner with
 * something due gets its earliest delivery, in the order of those deliveries, then each its second,
 * up to TURNS_PER_OWNER turns; then the rest of the queue of the owners that have more, oldest first,
 * while there is room. A delivery therefore waits behind at most one delivery of each other owner
 * due before it (and its own owner's earlier ones), never behind another owner's backlog: one round.
 * With one owner alone in the queue the whole batch is its, as before.
 *
 * The queue is read in its own order, from the start, in pages of `limit`: an owner that has had its
 * turns is skipped by the next page's read (in the store, on an index), so one owner's thousands of
 * due deliveries cost one page, not thousands. Reading stops once `limit` owners have their first
 * turn (no later owner can come before them) or the queue has no more.
 */
export async function dueInTurns<T extends QueuedForOwner>(limit: number, reads: DueReads<T>): Promise<T[]> {
  if (limit <= 0) return [];
  // In the order each owner's earliest delivery is due: the order of every turn.
  const turnsOf = new Map<string, T[]>();
  const done: string[] = [];
  let after: T | undefined;
  for (;;) {
    const page = await reads.next(after, done, limit);
    for (const delivery of page) {
      let turns = turnsOf.get(delivery.clientId);
      if (!turns) turnsOf.set(delivery.clientId, (turns = []));
      // Later ones of an owner that had its turns in this same page are left to `more`.
      if (turns.length >= TURNS_PER_OWNER) continue;
      turns.push(delivery);
      if (turns.length === TURNS_PER_OWNER) done.push(delivery.clientId);
    }
    after = page.at(-1);
    if (page.length < limit || turnsOf.size >= limit) break;
  }

  const batch: T[] = [];
  for (let turn = 0; turn < TURNS_PER_OWNER; turn += 1) {
    for (const turns of turnsOf.values()) {
      const delivery = turns[turn];
      if (delivery && batch.length < limit) batch.push(delivery);
    }
  }
  if (batch.length < limit && done.length > 0) {
    const taken = done.flatMap((owner) => (turnsOf.get(owner) ?? []).map((delivery) => delivery.key));
    batch.push(...(await reads.more(done, taken, limit - batch.length)));
  }
  return batch;
}
