import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Kafka } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { READ_VIEWS, credentialView, type CredentialView } from '@rsd/domain';
import { openKafkaEventLog } from '@rsd/kafka';
import { openMongoViewStore, type ViewDocument } from '@rsd/mongo';
import { createLogger } from '@rsd/platform';

// `npm run bench:engines`: the latencies the distributed runtime's request and event paths are built on,
// measured on the servers of `scripts/infra.sh up` (KAFKA_BROKERS, MONGO_URL), each in a topic or database
// of its own that it deletes at the end. These were assertions of the infra suites; they measure the
// machine as much as the code, so they are figures here, each beside the budget the design assumes:
// - Kafka: 100 single-record appends one after another, each timed to its acknowledgement (append) and
//   to its delivery to a live subscriber (end to end). Budget: p99 under 1 s for both.
// - MongoDB: a credential view read by Client ID (the read API's first read of a request), 1,000 reads
//   among 1,000 views. Budget: p99 under 100 ms.
// A figure over its budget is printed as such and the run exits 1.

const RUN = `rsd-bench-engines-${randomUUID().slice(0, 8)}`;
const APPENDS = Number(process.env.ENGINE_APPENDS ?? 100);
const VIEW_READS = Number(process.env.ENGINE_VIEW_READS ?? 1_000);
const log = createLogger('bench-engines', 'silent');

/** The sample at `fraction` of the sorted samples (nearest rank). */
function percentile(samples: readonly number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
}

interface Figure {
  name: string;
  p50: number;
  p99: number;
  budgetP99: number;
}

async function kafkaFigures(brokers: string[]): Promise<Figure[]> {
  const topic = `${RUN}-latency`;
  const groupId = `${RUN}-latency`;
  const eventLog = await openKafkaEventLog({
    brokers,
    clientId: RUN,
    log,
    topics: { names: [topic], partitions: 3, replicationFactor: 1 },
  });
  const deliveries = new Map<string, (at: number) => void>();
  const appendMs: number[] = [];
  const endToEndMs: number[] = [];
  const onDelivery = (record: { value: string }): Promise<void> => {
    deliveries.get(record.value)?.(performance.now());
    return Promise.resolve();
  };
  try {
    // A live-only follower, as a read-API replica's change feed is: it hears only what is appended from now on.
    const live = await eventLog.subscribe({ groupId, topics: [topic], fromBeginning: false, ephemeral: true, handle: onDelivery });
    await live.caughtUp;
    for (let n = 0; n < APPENDS; n += 1) {
      const value = String(n);
      const delivered = new Promise<number>((resolve) => deliveries.set(value, resolve));
      const started = performance.now();
      await eventLog.append(topic, [{ key: `k${n % 10}`, value }]);
      appendMs.push(performance.now() - started);
      endToEndMs.push((await delivered) - started);
    }
    await live.close();
  } finally {
    await eventLog.close();
    const admin = new Kafka({ clientId: `${RUN}-admin`, brokers, logCreator: () => () => undefined }).admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
  return [
    { name: `kafka append (${APPENDS} single records)`, p50: percentile(appendMs, 0.5), p99: percentile(appendMs, 0.99), budgetP99: 1_000 },
    { name: 'kafka append to live delivery', p50: percentile(endToEndMs, 0.5), p99: percentile(endToEndMs, 0.99), budgetP99: 1_000 },
  ];
}

async function mongoFigures(url: string): Promise<Figure[]> {
  const client = await MongoClient.connect(url, { appName: 'bench-engines' });
  const db = client.db(`rsd_bench_engines_${randomUUID().slice(0, 8)}`);
  try {
    const store = await openMongoViewStore(db, READ_VIEWS);
    const seeded: CredentialView[] = Array.from({ length: VIEW_READS }, () => ({
      clientId: `rs_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      organizationId: 'acme',
      keyDigest: 'b'.repeat(64),
      scopes: ['qr_score'],
      status: 'active',
      expiresAt: null,
      revision: 1,
    }));
    // Seeded in bulk, in the shape `put` writes.
    await db
      .collection<ViewDocument>(credentialView.name)
      .insertMany(seeded.map((view) => ({ _id: view.clientId, version: credentialView.versionOf(view), state: view })));
    const latenciesMs: number[] = [];
    for (let call = 0; call < VIEW_READS; call += 1) {
      const view = seeded[(call * 7919) % seeded.length]!;
      const started = performance.now();
      const found = await store.get(credentialView, view.clientId);
      latenciesMs.push(performance.now() - started);
      if (found?.clientId !== view.clientId) throw new Error(`read ${view.clientId} back as ${found?.clientId}`);
    }
    return [
      {
        name: `mongo credential view by Client ID (${VIEW_READS} among ${VIEW_READS})`,
        p50: percentile(latenciesMs, 0.5),
        p99: percentile(latenciesMs, 0.99),
        budgetP99: 100,
      },
    ];
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
}

async function main(): Promise<void> {
  const brokers = process.env.KAFKA_BROKERS;
  const mongoUrl = process.env.MONGO_URL;
  if (!brokers || !mongoUrl) throw new Error('set KAFKA_BROKERS and MONGO_URL (eval "$(scripts/infra.sh up)")');
  const figures = [...(await kafkaFigures(brokers.split(','))), ...(await mongoFigures(mongoUrl))];
  let over = 0;
  for (const { name, p50, p99, budgetP99 } of figures) {
    const verdict = p99 < budgetP99 ? 'within budget' : 'OVER BUDGET';
    if (p99 >= budgetP99) over += 1;
    process.stdout.write(`${name}: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (budget p99 < ${budgetP99} ms: ${verdict})\n`);
  }
  process.exitCode = over === 0 ? 0 : 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
