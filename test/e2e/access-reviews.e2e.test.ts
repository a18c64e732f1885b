import { accessReviewScenarios } from '../support/access-review-scenarios';
import type { EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';

let dataDir: string;
let product: EmbeddedProcess;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-reviews-', {
    ACCESS_REVIEW_CHECK_INTERVAL_MS: '500',
    // The test's webhook receiver listens on this machine.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  }));
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

const scenarios = accessReviewScenarios(() => ({
  credentials: product.urls.credentials,
  readApi: product.urls.readApi,
  scoreIngest: product.urls.scoreIngest,
  notifier: product.urls.notifier,
  receiverHost: '127.0.0.1',
  tokenFor: (org) => devTokenFor(dataDir, org),
}));

describe('access reviews (decision 54) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 180_000);
});
