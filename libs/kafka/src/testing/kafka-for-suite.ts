import { Kafka, type Admin } from 'kafkajs';
import { startInfra, uniqueName, type InfraTarget, type StartedServer } from '@rsd/testkit';

export interface KafkaForSuite {
  brokers(): string[];
  /** An admin client, connected, to look at what the suite did. */
  admin(): Admin;
  /** A topic name of this run, from `base`, deleted after the suite. */
  topic(base: string): string;
  /** A consumer group name of this run, from `base`, deleted after the suite. */
  group(base: string): string;
  /** A group named elsewhere (a contract suite names its own), to delete after the suite as well. */
  deleteGroupAfter(groupId: string): void;
}

/**
 * One Kafka (the environment's, or a container) for the suite, from `beforeAll` to `afterAll`, with
 * an admin client; call it in `describeWithInfra`'s body. Names of this run start with `run`. After
 * the suite it deletes the topics and groups it named and any other group whose name starts with
 * `run`: best effort, since the names are unique to this run, leftovers harm nobody.
 */
export function kafkaForSuite(target: () => InfraTarget, run: string): KafkaForSuite {
  let server: StartedServer | undefined;
  let brokers: string[] = [];
  let admin: Admin | undefined;
  const topics: string[] = [];
  const groups = new Set<string>();

  beforeAll(async () => {
    server = await startInfra('kafka', target());
    brokers = server.url.split(',');
    admin = new Kafka({ clientId: `${run}-inspector`, brokers, logCreator: () => () => undefined }).admin();
    await admin.connect();
  }, 120_000);

  afterAll(async () => {
    if (admin) {
      const listed = await admin.listGroups().catch(() => ({ groups: [] }));
      for (const { groupId } of listed.groups) if (groupId.startsWith(run)) groups.add(groupId);
      if (groups.size > 0) await admin.deleteGroups([...groups]).catch(() => undefined);
      if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
      await admin.disconnect();
    }
    await server?.stop();
  });

  return {
    brokers: () => brokers,
    admin: () => {
      if (!admin) throw new Error('not connected');
      return admin;
    },
    topic(base) {
      const name = uniqueName(`${run}-${base}`);
      topics.push(name);
      return name;
    },
    group(base) {
      const name = uniqueName(`${run}-${base}`);
      groups.add(name);
      return name;
    },
    deleteGroupAfter(groupId) {
      groups.add(groupId);
    },
  };
}
