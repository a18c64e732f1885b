import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AccessRecord } from '@rsd/contracts';
import { openAccessRecords, sealAccessRecords } from '@rsd/consumers';
import { openSqliteSubjectKeyStore } from '@rsd/embedded';
import { subjectCipher } from '@rsd/platform';

// `npm run bench:access-log-sealing`: what decision 56's sealing of the access-log topic's addresses costs the read
// API's publish (off the request path: the recorder's batch, ACCESS_LOG_BATCH_SIZE records a message) and the
// credentials service's reading, per record, in one process, against the same batch written and read in clear:
//  - publish: the message's value, `JSON.stringify({ records })` in clear, `sealAccessRecords` sealed (each address
//    taken out, one AES-256-GCM sealing per grant of the batch, the keys from the cipher's cache);
//  - consume: `openAccessRecords` of the clear message (parsed and checked, as before sealing) and of the sealed one.
// Batches of BATCH records spread over 1, 10, 100 and BATCH grants (one grant polling; a portfolio's page: one record
// per grant). Kafka's own send is the same either way and is not timed. RUNS runs, each a median of ROUNDS timed
// rounds of ITERATIONS batches after a warm-up; the table gives the median of the runs and their range.

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 40);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const SPREADS = [1, 10, 100, BATCH];

function aBatch(grants: number): AccessRecord[] {
  const clientIds = Array.from({ length: grants }, (_, i) => `rs_BENCH${String(i).padStart(20, '0')}`);
  return Array.from({ length: BATCH }, (_, i) => ({
    id: `bench-${i.toString(36)}`,
    clientId: clientIds[i % grants]!,
    at: new Date(Date.UTC(2026, 11, 3, 7, 0, 0, i)).toISOString(),
    resource: 'score' as const,
    status: 200,
    code: null,
    clientAddress: `198.51.${(i >> 8) & 255}.${i & 255}`,
    requestId: `req-${i}`,
  }));
}

/** µs per record of `work` done on one batch, the median of ROUNDS rounds of ITERATIONS batches. */
async function perRecord(work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < ITERATIONS; i += 1) await work();
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = performance.now();
    for (let i = 0; i < ITERATIONS; i += 1) await work();
    rounds.push(((performance.now() - started) * 1000) / (ITERATIONS * BATCH));
  }
  return median(rounds);
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const summary = (values: number[]): string =>
  `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rsd-bench-access-log-sealing-'));
  const store = openSqliteSubjectKeyStore({ file: join(dir, 'subject-keys.db') });
  try {
    const cipher = subjectCipher({ store, masterKey: randomBytes(32) });
    const rows: string[] = [];
    for (const grants of SPREADS) {
      const records = aBatch(grants);
      const clear = JSON.stringify({ records });
      const sealed = await sealAccessRecords(records, cipher);
      const figures = {
        publishClear: [] as number[],
        publishSealed: [] as number[],
        readClear: [] as number[],
        readSealed: [] as number[],
      };
      for (let run = 0; run < RUNS; run += 1) {
        // Alternating, the order reversed every other run, so that neither side always runs warmer.
        const sides: [keyof typeof figures, () => Promise<unknown>][] = [
          ['publishClear', () => Promise.resolve(JSON.stringify({ records }))],
          ['publishSealed', () => sealAccessRecords(records, cipher)],
          ['readClear', () => openAccessRecords(clear, cipher)],
          ['readSealed', () => openAccessRecords(sealed, cipher)],
        ];
        for (const [key, work] of run % 2 === 0 ? sides : sides.reverse()) figures[key].push(await perRecord(work));
      }
      rows.push(
        `| ${BATCH} records, ${grants} grant${grants === 1 ? '' : 's'} | ${summary(figures.publishClear)} | ${summary(figures.publishSealed)} | ${summary(figures.readClear)} | ${summary(figures.readSealed)} |`,
      );
    }
    process.stdout.write(
      [
        `access-log sealing, µs per record: ${RUNS} runs × median of ${ROUNDS} rounds × ${ITERATIONS} batches; node ${process.version}`,
        '| Batch | Publish, clear | Publish, sealed | Read, clear | Read, sealed |',
        '| --- | --- | --- | --- | --- |',
        ...rows,
        '',
      ].join('\n'),
    );
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
