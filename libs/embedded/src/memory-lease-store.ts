import type { LeaseEpoch } from '@rsd/domain';
import type { LeaseStore } from '@rsd/ports';

/**
 * Decision 52's lease store in one process's memory: what the lease keeper's tests and the store
 * contract run against (replicas of the embedded runtime do not exist: it never needs leases).
 */
export function createMemoryLeaseStore(): LeaseStore {
  const epochs = new Map<string, Map<string, LeaseEpoch[]>>();
  const members = new Map<string, Map<string, string>>();
  const ofGroup = <T>(all: Map<string, Map<string, T>>, group: string) => {
    let found = all.get(group);
    if (!found) all.set(group, (found = new Map<string, T>()));
    return found;
  };

  return {
    read(group, now) {
      const latest = new Map<string, LeaseEpoch>();
      for (const [name, chain] of ofGroup(epochs, group)) {
        const newest = chain.at(-1);
        if (newest) latest.set(name, { ...newest });
      }
      const at = now.toISOString();
      const alive = [...ofGroup(members, group)].filter(([, until]) => until > at).map(([member]) => member);
      return Promise.resolve({ latest, members: alive });
    },

    claim(group, epoch) {
      const chains = ofGroup(epochs, group);
      const chain = chains.get(epoch.name) ?? [];
      if (chain.some((held) => held.fence === epoch.fence)) return Promise.resolve(false);
      // As the store keeps it: the epochs before it are dropped.
      chains.set(
        epoch.name,
        [...chain.filter((held) => held.fence > epoch.fence), { ...epoch }].sort((a, b) => a.fence - b.fence),
      );
      return Promise.resolve(true);
    },

    renew(group, owner, renewed, until, released) {
      const chains = ofGroup(epochs, group);
      for (const { name, fence } of renewed) {
        const epoch = chains.get(name)?.find((held) => held.fence === fence && held.owner === owner);
        if (epoch) {
          epoch.until = until;
          if (released) epoch.released = true;
        }
      }
      return Promise.resolve();
    },

    heartbeat(group, member, until) {
      ofGroup(members, group).set(member, until);
      return Promise.resolve();
    },

    close: () => Promise.resolve(),
  };
}
