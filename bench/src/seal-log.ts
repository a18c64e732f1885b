import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { EVENT_TYPES } from '@rsd/contracts';
import { openSqliteEventLog } from '@rsd/embedded';
import { createLogger, runMain, SUBJECT_KEYS_MASTER_KEY_SECRET } from '@rsd/platform';
import { runtimeConfigSchema, sealDistributedLog } from '@rsd/runtime';
import { ROOT } from './processes';

// `npm run bench:seal-log`: what rewriting a log written before sealing costs (decision 56). EVENTS events in clear
// (a grant with a recipient's name for every ORGANIZATIONS-th, scores otherwise, ORGANIZATIONS organizations), then:
//  - embedded: the real `rsd seal-log --data-dir` on a data directory holding them (the report's seconds: the rewrite,
//    its VACUUM included, not the process's start);
//  - distributed, with KAFKA_BROKERS and MONGO_URL: `sealDistributedLog` on two topics of this run (6 partitions), in a
//    key database of its own (both dropped after): the staging copy, its check, the topics recreated and copied back.
// RUNS runs of each, each on new data; the median and the range of the seconds and of events/s.

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ORGANIZATIONS = 50;
const MASTER_KEY = Buffer.alloc(32, 5).toString('base64');
const run = promisify(execFile);
const log = createLogger('bench-seal-log', 'silent');

/** Event `i` of the log, as a build before sealing wrote it: the topic it goes to, its key and its value. */
function eventAt(i: number): { topic: 'authorizations' | 'scores'; key: string; value: string } {
  const organizationId = `bench-${i % ORGANIZATIONS}`;
  const envelope = {
    specversion: '1.0',
    id: randomUUID(),
    source: '/bench',
    time: '2026-11-01T00:00:00.000Z',
    datacontenttype: 'application/json',
  };
  if (i % ORGANIZATIONS === 0) {
    const clientId = `rs_${String(i).padStart(24, '0')}`;
    const data = {
      clientId,
      organizationId,
      recipientType: 'insurance_provider',
      recipientName: `Recipient ${i}`,
      allowedCidrs: ['192.0.2.0/28'],
    };
    return {
      topic: 'authorizations',
      key: clientId,
      value: JSON.stringify({ ...envelope, type: EVENT_TYPES.authorizationCreated, subject: clientId, data }),
    };
  }
  const data = {
    organizationId,
    scoreDate: '2026-11-20',
    calculatedAt: '2026-11-20T06:00:00.000Z',
    score: 40 + (i % 60),
    grade: 'Strengthen',
    pillarScores: { a: 50 },
  };
  return {
    topic: 'scores',
    key: organizationId,
    value: JSON.stringify({ ...envelope, type: EVENT_TYPES.scoreCalculated, subject: organizationId, data }),
  };
}

const BATCH = 1_000;
const batches = (): { topic: 'authorizations' | 'scores'; key: string; value: string }[][] => {
  const all = Array.from({ length: EVENTS }, (_, i) => eventAt(i));
  return Array.from({ length: Math.ceil(EVENTS / BATCH) }, (_, b) => all.slice(b * BATCH, (b + 1) * BATCH));
};

async function embeddedRun(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'rsd-bench-seal-log-'));
  try {
    const eventLog = openSqliteEventLog({ file: join(dir, 'rsd.sqlite') });
    for (const batch of batches()) {
      for (const topic of ['authorizations', 'scores'] as const) {
        const records = batch.filter((event) => event.topic === topic).map(({ key, value }) => ({ key, value }));
        await eventLog.append(`rsd.${topic}.v1`, records);
      }
    }
    await eventLog.close();
    await writeFile(join(dir, SUBJECT_KEYS_MASTER_KEY_SECRET.file), `${MASTER_KEY}\n`, { mode: 0o600 });
    const { stdout } = await run(process.execPath, [join(ROOT, 'tools/cli/bin/rsd.js'), 'seal-log', '--data-dir', dir], {
      maxBuffer: 1 << 24,
    });
    return (JSON.parse(stdout) as { seconds: number }).seconds;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function distributedRun(brokers: string, mongoUrl: string): Promise<number> {
  const runId = `rsd-bench-seal-log-${randomUUID().slice(0, 8)}`;
  const topics = { authorizations: `${runId}-authorizations`, scores: `${runId}-scores` };
  const keysDb = runId.replace(/-/g, '_');
  const kafka = new Kafka({ brokers: brokers.split(','), clientId: runId, logCreator: () => () => undefined });
  const admin = kafka.admin();
  await admin.connect();
  const mongo = await MongoClient.connect(mongoUrl);
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: Object.values(topics).map((topic) => ({
        topic,
        numPartitions: 6,
        replicationFactor: 1,
        configEntries: [{ name: 'retention.ms', value: '-1' }],
      })),
    });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (const batch of batches()) {
      await producer.sendBatch({
        acks: -1,
        topicMessages: (['authorizations', 'scores'] as const).map((topic) => ({
          topic: topics[topic],
          messages: batch.filter((event) => event.topic === topic).map(({ key, value }) => ({ key, value })),
        })),
      });
    }
    await producer.disconnect();
    const config = runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo'] }).parse({
      KAFKA_BROKERS: brokers,
      MONGO_URL: mongoUrl,
      SUBJECT_KEYS_DB: keysDb,
      SUBJECT_KEYS_MASTER_KEY: MASTER_KEY,
    });
    const report = await sealDistributedLog(config, log, { topics: { names: Object.values(topics), deadLetter: 'none' } });
    return report.seconds;
  } finally {
    await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
    await admin.disconnect();
    await mongo.db(keysDb).dropDatabase();
    await mongo.close();
  }
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const row = (name: string, seconds: number[]) => {
  const rates = seconds.map((s) => EVENTS / s);
  const range = (values: number[], digits: number) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
  return `| ${name} | ${EVENTS} | ${median(seconds).toFixed(2)} (${range(seconds, 2)}) | ${median(rates).toFixed(0)} (${range(rates, 0)}) |`;
};

async function main(): Promise<void> {
  const lines = ['| runtime | events | seconds, median (range) | events/s, median (range) |', '| --- | --- | --- | --- |'];
  const embedded: number[] = [];
  for (let i = 0; i < RUNS; i += 1) embedded.push(await embeddedRun());
  lines.push(row('embedded (`rsd seal-log`)', embedded));
  const { KAFKA_BROKERS, MONGO_URL } = process.env;
  if (KAFKA_BROKERS && MONGO_URL) {
    const distributed: number[] = [];
    for (let i = 0; i < RUNS; i += 1) distributed.push(await distributedRun(KAFKA_BROKERS, MONGO_URL));
    lines.push(row('distributed (`npm run seal-log`)', distributed));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

runMain(main);
