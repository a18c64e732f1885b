import type { Admin } from 'kafkajs';
import { replicationOf } from './topic-admin';

/** An admin client whose cluster has `brokers` brokers answering. */
const clusterOf = (brokers: number) =>
  ({
    describeCluster: () =>
      Promise.resolve({
        brokers: Array.from({ length: brokers }, (_, i) => ({ nodeId: i + 1, host: '127.0.0.1', port: 9092 + i })),
        controller: 1,
        clusterId: 'c',
      }),
  }) as unknown as Admin;

describe('replicationOf', () => {
  test('when three brokers or more answer, then topics get 3 replicas and min.insync.replicas=2', async () => {
    await expect(replicationOf(clusterOf(3), { partitions: 6 }, 1)).resolves.toEqual({
      replicationFactor: 3,
      configEntries: [{ name: 'min.insync.replicas', value: '2' }],
    });
    await expect(replicationOf(clusterOf(5), { partitions: 6 }, 1)).resolves.toMatchObject({ replicationFactor: 3 });
  });

  test('when one of three listed brokers is down while the topic is made, then it still gets 3 replicas', async () => {
    await expect(replicationOf(clusterOf(2), { partitions: 6 }, 3)).resolves.toMatchObject({ replicationFactor: 3 });
  });

  test('when the cluster is one broker, then one replica and no min.insync.replicas of its own', async () => {
    await expect(replicationOf(clusterOf(1), { partitions: 6 }, 1)).resolves.toEqual({ replicationFactor: 1, configEntries: [] });
  });

  test('when a factor is configured, then it is used whatever the cluster size', async () => {
    await expect(replicationOf(clusterOf(3), { partitions: 6, replicationFactor: 1 }, 3)).resolves.toEqual({
      replicationFactor: 1,
      configEntries: [],
    });
  });
});
