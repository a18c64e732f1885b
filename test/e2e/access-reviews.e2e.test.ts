import { accessReviewScenarios } from '../support/access-review-scenarios';
import { embeddedSuite } from '../support/embedded-suite';

const suite = embeddedSuite('rsd-reviews-', {
  ACCESS_REVIEW_CHECK_INTERVAL_MS: '500',
  // The test's webhook receiver listens on this machine.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
});
const scenarios = accessReviewScenarios(() => ({ ...suite.product.urls, receiverHost: '127.0.0.1', tokenFor: suite.tokenFor }));

describe('access reviews (decision 54) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 180_000);
});
