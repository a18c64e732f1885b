import { cpSync, existsSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './processes';
import { infra, START_ORDER_INFRA } from './start-order/infra';
import { optionsOrExit } from './command-line';
import { parseOptions, USAGE } from './start-order/options';
import { render } from './start-order/report';
import { runOrder, type RunResult } from './start-order/run-order';

// `npm run test:start-order -- --repeat 10`: every service starts before its dependencies and
// becomes ready by itself, whatever order Kafka, the MongoDB-wire server and Redis come up in. Runs
// every order per repetition on an infra instance of its own, prints a table and exits 1 if any run
// failed.

const progress = (line: string) => process.stderr.write(`[start-order] ${line}\n`);

const SERVER_LOGS = ['kafka/kafka.log', 'kafka/kafka.out', 'ferretdb/ferretdb.log', 'redis/redis.log'];

function keepServerLogs(logDir: string): void {
  for (const log of SERVER_LOGS) {
    const from = join(START_ORDER_INFRA.dir, log);
    if (existsSync(from)) cpSync(from, join(logDir, 'servers', log));
  }
}

async function main(): Promise<number> {
  const options = optionsOrExit(USAGE, parseOptions);

  const interruption = new AbortController();
  const onSignal = () => {
    if (interruption.signal.aborted) process.exit(130);
    interruption.abort();
    progress('interrupted: stopping the processes and the servers (again to force)');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const began = Date.now();
  const results: RunResult[] = [];
  rmSync(join(START_ORDER_INFRA.dir, 'services'), { recursive: true, force: true });
  try {
    for (let repetition = 1; repetition <= options.repeat && !interruption.signal.aborted; repetition += 1) {
      for (const order of options.orders) {
        if (interruption.signal.aborted) break;
        progress(`run ${repetition}/${options.repeat}: ${order.join(' → ')}`);
        const result = await runOrder(repetition, order, progress, interruption.signal);
        results.push(result);
        progress(result.failures.length === 0 ? 'pass' : `FAIL:\n${result.failures.join('\n')}`);
        // A passing run's logs are not needed; a failing one's are the evidence, the servers' included
        // (the next run's `infra.sh up` starts their logs afresh).
        if (result.failures.length === 0) rmSync(result.logDir, { recursive: true, force: true });
        else keepServerLogs(result.logDir);
      }
    }
  } finally {
    await infra('down', [], () => undefined).catch((error: unknown) => progress(`could not take the instance down: ${String(error)}`));
  }

  const minutes = ((Date.now() - began) / 60_000).toFixed(0);
  const header =
    `Start order, ${new Date().toISOString().slice(0, 10)}: ${results.length} runs (${options.repeat} × ${options.orders.length} orders) in ${minutes} min, ` +
    `${availableParallelism()} cores, Node ${process.version}; credentials, score-ingest and two read-API replicas started before any server`;
  const report = render(header, results);
  process.stdout.write(`\n${report}\n`);
  await mkdir(join(ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(ROOT, 'bench/results/start-order.md'), `${report}\n`);
  const failed = results.some((r) => r.failures.length > 0);
  return failed || interruption.signal.aborted || results.length === 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
