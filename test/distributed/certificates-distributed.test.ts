import { describeWithInfra } from '@rsd/testkit';
import { installCertificateTools } from '../support/certificate-checks';
import { certificateScenarios } from '../support/certificate-scenarios';
import { everyTopicRecord } from '../support/leak-search';
import { sealedLogScenarios } from '../support/sealed-log-scenarios';
import { distributedSuite } from '../support/distributed-product';

/**
 * Decision 55's certificates on the distributed runtime: the four services as processes on real
 * Kafka, a MongoDB-wire server (the history read by its index) and Redis; the same scenarios as on
 * the embedded runtime (test/e2e/certificates.e2e.test.ts), checked by joserfc and poppler.
 */
describeWithInfra('kafka', 'score certificates on the distributed runtime', (kafkaTarget) => {
  const suite = distributedSuite(kafkaTarget, {}, installCertificateTools);
  const target = () => ({
    credentials: suite.product.urls.credentials,
    scoreIngest: suite.product.urls.scoreIngest,
    readApis: [suite.product.urls.readApi],
    tokenFor: suite.tokenFor,
  });
  const scenarios = certificateScenarios(target);
  // Decision 56: the log a certificate's name and score come from holds neither readable (every product topic's raw records).
  const sealedLog = sealedLogScenarios(() => ({
    ...target(),
    logValues: async () => (await everyTopicRecord(process.env.KAFKA_BROKERS!, `sealed-log-${Date.now()}`)).values,
  }));
  for (const [name, scenario] of Object.entries({ ...scenarios, ...sealedLog })) test(name, scenario, 120_000);
});
