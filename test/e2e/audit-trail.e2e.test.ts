import { ageEmbeddedFirstAttempts } from '../support/aged-deliveries';
import { auditScenarios } from '../support/audit-scenarios';
import { embeddedSuite } from '../support/embedded-suite';

const suite = embeddedSuite('rsd-audit-', { EXPIRY_CHECK_INTERVAL_MS: '500', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
const scenarios = auditScenarios(() => ({
  ...suite.product.urls,
  tokenFor: suite.tokenFor,
  ageFirstAttempts: (webhookId) => ageEmbeddedFirstAttempts(suite.dataDir, webhookId),
}));

describe('the audit trail (decision 54) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);
});
