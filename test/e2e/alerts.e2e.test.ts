import { embeddedSuite } from '../support/embedded-suite';
import { alertScenarios } from '../support/alert-scenarios';

const suite = embeddedSuite('rsd-alerts-', {
  // Addresses come from X-Forwarded-For, as behind one proxy; failures must not reach the per-address limit.
  TRUST_PROXY_HOPS: '1',
  FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
  // The receivers of the alert webhooks are on loopback: decision 28's development flag.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  EXPIRY_CHECK_INTERVAL_MS: '500',
  ACCESS_LOG_FLUSH_INTERVAL_MS: '200',
});
const alerts = alertScenarios(() => ({ ...suite.target(), receiverHost: '127.0.0.1', keyPrefix: 'rsk' }));
afterAll(() => alerts.cleanUp());

describe('organization alerts (decision 44) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(alerts.scenarios)) test(name, scenario, 120_000);
});
