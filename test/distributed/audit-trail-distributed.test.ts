import { describeWithInfra } from '@rsd/testkit';
import { ageMongoFirstAttempts } from '../support/aged-deliveries';
import { auditScenarios } from '../support/audit-scenarios';
import { distributedSuite } from '../support/distributed-product';

/**
 * Decision 54's audit trail on the distributed runtime: the four services as processes on real Kafka,
 * a MongoDB-wire server and Redis; the credentials service follows the authorizations' topic and the
 * notifier's webhook changes into its MongoDB audit view.
 */
describeWithInfra('kafka', 'the audit trail on the distributed runtime', (kafkaTarget) => {
  const suite = distributedSuite(kafkaTarget, {
    EXPIRY_CHECK_INTERVAL_MS: '500',
    OUTBOX_RELAY_INTERVAL_MS: '500',
    // The scenario's webhooks point at loopback, where nothing is sent (the notifier reads it alone).
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  const scenarios = auditScenarios(() => ({
    ...suite.product.urls,
    tokenFor: suite.tokenFor,
    ageFirstAttempts: (webhookId) => ageMongoFirstAttempts(suite.product.env.MONGO_URL!, suite.product.env.NOTIFIER_DB!, webhookId),
  }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 180_000);
});
