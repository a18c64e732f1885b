import { signDevToken } from '@rsd/platform';
import { describeWithInfra } from '@rsd/testkit';
import { installCertificateTools } from '../support/certificate-checks';
import { certificateScenarios } from '../support/certificate-scenarios';
import { startDistributedProduct, type DistributedProduct } from '../support/distributed-product';

/**
 * Decision 55's certificates on the distributed runtime: the four services as processes on real
 * Kafka, a MongoDB-wire server (the history read by its index) and Redis; the same scenarios as on
 * the embedded runtime (test/e2e/certificates.e2e.test.ts), checked by joserfc and poppler.
 */
describeWithInfra('kafka', 'score certificates on the distributed runtime', (kafkaTarget) => {
  let product: DistributedProduct | undefined;

  beforeAll(async () => {
    await installCertificateTools();
    product = await startDistributedProduct(kafkaTarget());
  }, 180_000);

  afterAll(() => product?.stop(), 60_000);

  const scenarios = certificateScenarios(() => ({
    credentials: product!.urls.credentials,
    scoreIngest: product!.urls.scoreIngest,
    readApis: [product!.urls.readApi],
    tokenFor: (org) => signDevToken(product!.jwtSecret, { org, scope: 'authorizations:write scores:write' }),
  }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);
});
