import { describeWithInfra } from '@rsd/testkit';
import { installCertificateTools } from '../support/certificate-checks';
import { certificateScenarios } from '../support/certificate-scenarios';
import { distributedSuite } from '../support/distributed-product';

/**
 * Decision 55's certificates on the distributed runtime: the four services as processes on real
 * Kafka, a MongoDB-wire server (the history read by its index) and Redis; the same scenarios as on
 * the embedded runtime (test/e2e/certificates.e2e.test.ts), checked by joserfc and poppler.
 */
describeWithInfra('kafka', 'score certificates on the distributed runtime', (kafkaTarget) => {
  const suite = distributedSuite(kafkaTarget, {}, installCertificateTools);
  const scenarios = certificateScenarios(() => ({
    credentials: suite.product.urls.credentials,
    scoreIngest: suite.product.urls.scoreIngest,
    readApis: [suite.product.urls.readApi],
    tokenFor: suite.tokenFor,
  }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);
});
