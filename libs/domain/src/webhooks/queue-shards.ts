/**
 * Decision 52: the webhook queue is cut into this many shards, each worked by one notifier replica at a
 * time under a lease. More replicas than shards would leave some idle, so this bounds the replicas that
 * share the deliveries (the notifier's autoscaler stays below it).
 */
export const QUEUE_SHARDS = 32;

/**
 * The shard of an owner's deliveries (FNV-1a of the owner's key): all of one owner's queue is in one
 * shard, so one replica gives its deliveries their turns (decision 50) and writes its subscriptions'
 * attempts, and an owner whose endpoint fails holds up only the owners of its shard's replica.
 */
export function queueShardOf(ownerKey: string, shards: number = QUEUE_SHARDS): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < ownerKey.length; index += 1) {
    hash ^= ownerKey.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}
