import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describeWithInfra, startInfra, type StartedServer } from '@rsd/testkit';
import { REPO_ROOT } from '../support/embedded-process';
import { TEST_SUBJECT_KEYS_MASTER_KEY } from '../support/service-process';

const run = promisify(execFile);
const DRIVERS = ['kafkajs', 'mongodb', 'ioredis'];

/**
 * Opens the built runtime in a fresh process, asks it for what one service uses, and reports which
 * server drivers ended up loaded: a service must load only the adapters it uses.
 */
async function driversLoadedBy(env: Record<string, string>, uses: string): Promise<string[]> {
  const script = `
    const { openRuntime, runtimeConfigSchema } = require('@rsd/runtime');
    const { createLogger, loadConfig } = require('@rsd/platform');
    (async () => {
      const config = loadConfig(runtimeConfigSchema({ defaultRuntime: 'embedded', needs: [] }), process.env);
      const runtime = await openRuntime(config, 'adapter-loading-probe', createLogger('probe', 'silent'));
      ${uses}
      const loaded = ${JSON.stringify(DRIVERS)}.filter((name) =>
        Object.keys(require.cache).some((file) => file.includes('/node_modules/' + name + '/')));
      await runtime.close();
      process.stdout.write(JSON.stringify(loaded));
    })().catch((error) => { process.stderr.write(String(error?.stack ?? error)); process.exit(1); });
  `;
  const { stdout } = await run(process.execPath, ['-e', script], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 60_000 });
  return JSON.parse(stdout) as string[];
}

describe('adapter loading', () => {
  test('when the embedded runtime serves all three services, then no server driver is loaded', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'rsd-adapters-'));
    try {
      const loaded = await driversLoadedBy(
        { RUNTIME: 'embedded', DATA_DIR: dataDir },
        'await runtime.openAuthorizationStore(); await runtime.openViews("read-views", []); await runtime.rateLimitStores();',
      );
      expect(loaded).toEqual([]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describeWithInfra('kafka', 'adapter loading on the distributed runtime', (target) => {
  let kafka: StartedServer | undefined;

  beforeAll(async () => {
    kafka = await startInfra('kafka', target());
  }, 120_000);

  afterAll(async () => {
    await kafka?.stop();
  });

  test('when score ingest opens its runtime (the event log only), then neither the MongoDB nor the Redis driver is loaded', async () => {
    // The subjects' key store (decision 56) is opened at the first seal or opening, not with the runtime.
    const loaded = await driversLoadedBy(
      { RUNTIME: 'distributed', KAFKA_BROKERS: kafka!.url, SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY },
      '',
    );
    expect(loaded).toEqual(['kafkajs']);
  }, 90_000);
});
