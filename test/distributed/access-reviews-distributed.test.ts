import { describeWithInfra } from '@rsd/testkit';
import { accessReviewScenarios } from '../support/access-review-scenarios';
import { distributedSuite } from '../support/distributed-product';

/**
 * Decision 54's access reviews on the distributed runtime: the services as processes on real Kafka,
 * a MongoDB-wire server and Redis; the reviews kept in the credentials service's MongoDB store, their
 * due time settled under its relay's lease, their alerts delivered by the notifier.
 */
describeWithInfra('kafka', 'access reviews on the distributed runtime', (kafkaTarget) => {
  const suite = distributedSuite(kafkaTarget, {
    ACCESS_REVIEW_CHECK_INTERVAL_MS: '500',
    OUTBOX_RELAY_INTERVAL_MS: '500',
    ACCESS_LOG_FLUSH_INTERVAL_MS: '200',
    // The test's webhook receiver listens on this machine.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  const scenarios = accessReviewScenarios(() => ({ ...suite.product.urls, receiverHost: '127.0.0.1', tokenFor: suite.tokenFor }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 240_000);
});
