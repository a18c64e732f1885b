import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { MongoClient } from 'mongodb';
import type { AccessRecord } from '@rsd/contracts';
import { openMongoAccessLogStore } from '@rsd/mongo';

// `npm run bench:fold`: the credentials service's access-log fold (the MongoDB access-log store's
// `add`, what the projection does with each access message) on the distributed runtime's
// MongoDB-wire server (MONGO_URL), in a database of its own that it drops at the end. For each shape
// of message (500 records of as many credentials, of 20, of one) it times `add` per message and
// counts the driver's round trips (command monitoring), after a warm-up. Wall times depend on the
// machine and the server; the round trips do not.

const RECORDS_PER_MESSAGE = Number(process.env.FOLD_RECORDS ?? 500);
const MESSAGES = Number(process.env.FOLD_MESSAGES ?? 20);
const WARM_UP = 3;
const SHAPES = [
  { name: 'every record another credential', credentials: RECORDS_PER_MESSAGE },
  { name: '20 credentials', credentials: 20 },
  { name: 'one credential', credentials: 1 },
];

function messageOf(clientIds: readonly string[], at: Date): AccessRecord[] {
  return Array.from({ length: RECORDS_PER_MESSAGE }, (_, i) => ({
    id: randomUUID(),
    clientId: clientIds[i % clientIds.length]!,
    at: new Date(at.getTime() + i).toISOString(),
    requestId: randomUUID(),
    resource: 'score' as const,
    // One in ten refused, as a busy day's mix of reads would be.
    status: i % 10 === 9 ? 429 : 200,
    code: i % 10 === 9 ? 'RATE_LIMITED' : null,
    clientAddress: '203.0.113.7',
  }));
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main(): Promise<void> {
  const url = process.env.MONGO_URL;
  if (!url) throw new Error('set MONGO_URL (eval "$(scripts/infra.sh up)")');
  const client = await MongoClient.connect(url, { monitorCommands: true, appName: 'bench-fold' });
  let commands = 0;
  client.on('commandStarted', () => (commands += 1));
  const db = client.db(`rsd_bench_fold_${randomUUID().slice(0, 8)}`);
  const rows: string[] = [];
  try {
    const store = await openMongoAccessLogStore(db, { retentionDays: 90 });
    for (const shape of SHAPES) {
      const clientIds = Array.from({ length: shape.credentials }, () => `rs_${randomUUID().replaceAll('-', '')}`);
      const times: number[] = [];
      const trips: number[] = [];
      const start = Date.now() - 60 * 60_000;
      for (let i = 0; i < WARM_UP + MESSAGES; i += 1) {
        // Messages a few seconds apart, as a replica's flushes are: most share their minute.
        const records = messageOf(clientIds, new Date(start + i * 5_000));
        commands = 0;
        const t0 = performance.now();
        await store.add(records);
        if (i >= WARM_UP) {
          times.push(performance.now() - t0);
          trips.push(commands);
        }
      }
      const row =
        `| ${shape.name} | ${RECORDS_PER_MESSAGE} | ${median(times).toFixed(1)} ms (${Math.min(...times).toFixed(1)}–${Math.max(...times).toFixed(1)}) ` +
        `| ${median(trips)} (${Math.min(...trips)}–${Math.max(...trips)}) |`;
      rows.push(row);
      process.stderr.write(`${row}\n`);
    }
    await store.close();
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
  process.stdout.write(
    [
      '| message | records | time per message, median (range) | MongoDB round trips per message, median (range) |',
      '| --- | --- | --- | --- |',
      ...rows,
    ].join('\n') + '\n',
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
