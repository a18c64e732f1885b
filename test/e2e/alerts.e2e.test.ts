import { startEmbeddedOnNewDataDir, devTokenFor, stopAndRemove } from '../support/embedded-suite';
import type { EmbeddedProcess } from '../support/embedded-process';
import { alertScenarios } from '../support/alert-scenarios';

let dataDir: string;
let product: EmbeddedProcess;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-alerts-', {
    // Addresses come from X-Forwarded-For, as behind one proxy; failures must not reach the per-address limit.
    TRUST_PROXY_HOPS: '1',
    FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
    // The receivers of the alert webhooks are on loopback: decision 28's development flag.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    EXPIRY_CHECK_INTERVAL_MS: '500',
    ACCESS_LOG_FLUSH_INTERVAL_MS: '200',
  }));
}, 90_000);

const alerts = alertScenarios(() => ({
  credentials: product.urls.credentials,
  scoreIngest: product.urls.scoreIngest,
  notifier: product.urls.notifier,
  readApis: [product.urls.readApi],
  receiverHost: '127.0.0.1',
  tokenFor: (org) => devTokenFor(dataDir, org),
  keyPrefix: 'rsk',
}));

afterAll(async () => {
  await alerts.cleanUp();
  await stopAndRemove(product, dataDir);
});

describe('organization alerts (decision 44) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(alerts.scenarios)) test(name, scenario, 120_000);
});
