import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSecretScanningProvider, type SecretScanningProvider } from '@rsd/testkit';
import { eventLogValues, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import { leakedKeyScenarios, leakedKeySecrets } from '../support/leaked-key-scenarios';

const FAILED_AUTH_LIMIT = 300;

let dataDir: string;
let product: EmbeddedProcess;
let provider: SecretScanningProvider;

beforeAll(async () => {
  provider = await startSecretScanningProvider();
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-leaked-keys-', {
    SECRET_SCANNING_KEYS_URL: provider.keysUrl,
    FAILED_AUTH_LIMIT_PER_MINUTE: String(FAILED_AUTH_LIMIT),
  }));
}, 90_000);

afterAll(async () => {
  await stopAndRemove(product, dataDir);
  await provider?.close();
});

const scenarios = leakedKeyScenarios(() => ({
  credentials: product.urls.credentials,
  scoreIngest: product.urls.scoreIngest,
  readApis: [product.urls.readApi],
  tokenFor: (org) => devTokenFor(dataDir, org),
  provider,
  failedAuthLimitPerMinute: FAILED_AUTH_LIMIT,
}));

describe('leaked keys (decision 43) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);

  test('when the run is over, then no reported key is in the output, the event log or any file of the data directory', async () => {
    const files = (await readdir(dataDir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    const stored = await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')));
    const haystacks = [product.output(), eventLogValues(dataDir).join('\n'), ...stored];
    expect(leakedKeySecrets.length).toBeGreaterThanOrEqual(8);
    expect(leakedKeySecrets.filter((secret) => haystacks.some((haystack) => haystack.includes(secret)))).toEqual([]);
  });
});
