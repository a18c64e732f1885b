import { ageEmbeddedFirstAttempts } from '../support/aged-deliveries';
import { auditScenarios } from '../support/audit-scenarios';
import type { EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';

let dataDir: string;
let product: EmbeddedProcess;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-audit-', {
    EXPIRY_CHECK_INTERVAL_MS: '500',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  }));
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

const scenarios = auditScenarios(() => ({
  credentials: product.urls.credentials,
  notifier: product.urls.notifier,
  tokenFor: (org) => devTokenFor(dataDir, org),
  ageFirstAttempts: (webhookId) => ageEmbeddedFirstAttempts(dataDir, webhookId),
}));

describe('the audit trail (decision 54) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);
});
