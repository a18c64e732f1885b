import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import { eventLogValues, type EmbeddedProcess } from '../support/embedded-process';
import { sealedLogScenarios } from '../support/sealed-log-scenarios';

let dataDir: string;
let product: EmbeddedProcess;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-sealed-events-'));
}, 180_000);

afterAll(() => stopAndRemove(product, dataDir));

const scenarios = sealedLogScenarios(() => ({
  credentials: product.urls.credentials,
  scoreIngest: product.urls.scoreIngest,
  readApis: [product.urls.readApi],
  tokenFor: (org) => devTokenFor(dataDir, org),
  logValues: () => Promise.resolve(eventLogValues(dataDir)),
}));

describe('sealed events (decision 56) on the embedded runtime: rsd.sqlite', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);
});
