import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS } from '@rsd/contracts';
import { READ_VIEWS } from '@rsd/domain';
import { createLogger, loadConfigs } from '@rsd/platform';
import { startProjections } from '@rsd/read-api/dist/projections/projection-runner';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import { scoreRecordOf } from './scale/score-factory';

/**
 * `npm run bench:drain` (the goal: the projection drains ≥ 1,000 events/s on the stand-in): appends
 * `--scores N` score events (N/10 organizations, ten days each, as score ingest writes them) to the
 * Kafka of KAFKA_BROKERS, then runs the read API's projection, as the service runs it (a consumer
 * group that commits), from offset zero into a fresh views database on MONGO_URL, and times it until
 * caught up with everything in its topics. Its group and database are removed afterwards.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scores: { type: 'string', default: '5000' } } });
  const scores = Number(values.scores);
  const run = randomUUID().slice(0, 8);
  const viewsDb = `bench_drain_${run}`;
  const [settings] = loadConfigs([runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo'] })], {
    ...process.env,
    RUNTIME: 'distributed',
    READ_VIEWS_DB: viewsDb,
    // Decision 56: the records it writes are plain score events, which open without a key.
    SUBJECT_KEYS_MASTER_KEY: process.env.SUBJECT_KEYS_MASTER_KEY ?? randomBytes(32).toString('base64'),
  });
  const log = createLogger('bench-drain', process.env.LOG_LEVEL === 'debug' ? 'debug' : 'warn');
  const runtime = await openRuntime(settings, 'bench-drain', log);
  const kafka = new Kafka({ clientId: 'bench-drain', brokers: [...settings.KAFKA_BROKERS], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `bench-drain-${run}`;
  try {
    const today = Date.parse(new Date().toISOString().slice(0, 10));
    const records = Array.from({ length: scores }, (_, i) => {
      const organization = Math.floor(i / 10);
      const day = i % 10;
      const scoreDate = new Date(today - (10 - day) * 86_400_000).toISOString().slice(0, 10);
      return scoreRecordOf(`bench-drain-${run}-${organization}`, organization, day, scoreDate);
    });
    for (let at = 0; at < records.length; at += 500) await runtime.eventLog.append(TOPICS.scores, records.slice(at, at + 500));

    let events = 0;
    for (const topic of [TOPICS.authorizations, TOPICS.scores]) {
      for (const { high, low } of await admin.fetchTopicOffsets(topic)) events += Number(high) - Number(low);
    }
    process.stderr.write(`appended; ${events} events to project\n`);
    const { store: views } = await runtime.openViews('read-views', READ_VIEWS);
    const started = performance.now();
    const projection = await startProjections({ eventLog: runtime.eventLog, views, log, groupId, deadLetters: false });
    await projection.caughtUp;
    const seconds = (performance.now() - started) / 1000;
    await projection.close();

    const rows = [
      ['events in the topics (all runs so far)', events.toLocaleString('en-US')],
      ['of which appended by this run', scores.toLocaleString('en-US')],
      ['subscribe → caught up, s', seconds.toFixed(1)],
      ['events/s', Math.round(events / seconds).toLocaleString('en-US')],
    ];
    process.stdout.write(
      `\n| measurement | value |\n| --- | ---: |\n${rows.map(([name, value]) => `| ${name} | ${value} |`).join('\n')}\n`,
    );
  } finally {
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
    await runtime.close();
    await dropDatabase(settings.MONGO_URL!, viewsDb);
  }
}

async function dropDatabase(url: string, name: string): Promise<void> {
  const { MongoClient } = await import('mongodb');
  const client = await new MongoClient(url).connect();
  try {
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
