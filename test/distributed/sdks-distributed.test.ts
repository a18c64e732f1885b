import { signDevToken } from '@rsd/platform';
import { describeWithInfra } from '@rsd/testkit';
import { ORGANIZATION_SUITE_ENV, organizationSuite } from '../../sdks/typescript/test/organization-suite';
import { PORTFOLIO_SUITE_ENV, portfolioSuite } from '../../sdks/typescript/test/portfolio-suite';
import type { ProductUnderTest } from '../../sdks/typescript/test/product-under-test';
import { startDistributedProduct, type DistributedProduct } from '../support/distributed-product';

/**
 * The TypeScript SDK's product suites (sdks/typescript/test/*-suite.ts, which its e2e tests run on the
 * embedded runtime) on the distributed runtime: the four services as processes on real Kafka, a
 * MongoDB-wire server and Redis. A portfolio iterated across pages, every owner's webhook through its
 * whole lifecycle, and 25,000 scores published from a generator with one batch sent twice.
 */
describeWithInfra('kafka', 'the TypeScript SDK on the distributed runtime', (kafkaTarget) => {
  let product: DistributedProduct | undefined;

  beforeAll(async () => {
    product = await startDistributedProduct(kafkaTarget(), { ...PORTFOLIO_SUITE_ENV, ...ORGANIZATION_SUITE_ENV });
  }, 180_000);

  afterAll(() => product?.stop(), 60_000);

  const running = (): ProductUnderTest => ({ urls: product!.urls, token: (claims) => signDevToken(product!.jwtSecret, claims) });
  describe('portfolios and webhooks', () => portfolioSuite(running));
  describe('organizations and scoring engines', () => organizationSuite(running));
});
