import { ORGANIZATION_SUITE_ENV, organizationSuite } from './organization-suite.js';
import { onTheEmbeddedRuntime } from './product-under-test.js';

/** The Organization suite on the embedded runtime (test/distributed/sdks-distributed.test.ts runs it on the distributed one). */
onTheEmbeddedRuntime('rsd-sdk-org-', ORGANIZATION_SUITE_ENV, organizationSuite);
