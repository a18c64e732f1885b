import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventLogValues, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import { portfolioScenarios, portfolioSecrets } from '../support/portfolio-scenarios';

const ACCOUNT_LIMIT = 300;

let dataDir: string;
let product: EmbeddedProcess;

beforeAll(async () => {
  // Every request comes from 127.0.0.1: the refused keys below must not reach the per-address limit.
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-portfolio-', {
    FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
    ACCOUNT_RATE_LIMIT_PER_MINUTE: String(ACCOUNT_LIMIT),
  }));
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

const scenarios = portfolioScenarios(() => ({
  credentials: product.urls.credentials,
  scoreIngest: product.urls.scoreIngest,
  readApis: [product.urls.readApi],
  tokenFor: (org) => devTokenFor(dataDir, org),
  accountLimitPerMinute: ACCOUNT_LIMIT,
}));

describe('portfolios (decision 42) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);

  test('when the run is over, then no account key or claim token is in the output, the event log or any file of the data directory', async () => {
    const files = (await readdir(dataDir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    const stored = await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')));
    const haystacks = [product.output(), eventLogValues(dataDir).join('\n'), ...stored];
    expect(portfolioSecrets.length).toBeGreaterThanOrEqual(10);
    for (const secret of portfolioSecrets) for (const haystack of haystacks) expect(haystack.includes(secret)).toBe(false);
  });
});
