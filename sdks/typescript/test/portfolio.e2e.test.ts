import { readDevSecret, signDevToken } from '@rsd/platform';
import { startEmbeddedOnNewDataDir, stopAndRemove, type EmbeddedOnDataDir } from '../../../test/support/embedded-suite.js';
import { PORTFOLIO_SUITE_ENV, portfolioSuite } from './portfolio-suite.js';

/** The portfolio and webhook suite on the embedded runtime, `npm start` on ephemeral loopback ports (test/distributed/sdks-distributed.test.ts runs it on the distributed one). */
let started: EmbeddedOnDataDir | undefined;
let devSecret: string;

beforeAll(async () => {
  started = await startEmbeddedOnNewDataDir('rsd-sdk-portfolio-', PORTFOLIO_SUITE_ENV);
  devSecret = (await readDevSecret(started.dataDir))!;
}, 90_000);

afterAll(() => stopAndRemove(started?.product, started?.dataDir));

portfolioSuite(() => ({ urls: started!.product.urls, token: (claims) => signDevToken(devSecret, claims) }));
