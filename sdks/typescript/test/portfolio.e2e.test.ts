import { PORTFOLIO_SUITE_ENV, portfolioSuite } from './portfolio-suite.js';
import { onTheEmbeddedRuntime } from './product-under-test.js';

/** The portfolio and webhook suite on the embedded runtime (test/distributed/sdks-distributed.test.ts runs it on the distributed one). */
onTheEmbeddedRuntime('rsd-sdk-portfolio-', PORTFOLIO_SUITE_ENV, portfolioSuite);
