import { readDevSecret, signDevToken } from '@rsd/platform';
import { startEmbeddedOnNewDataDir, stopAndRemove, type EmbeddedOnDataDir } from '../../../test/support/embedded-suite.js';

/**
 * The running product as the SDK's product suites see it, on either runtime: each service's origin,
 * and tokens signed as the credentials service and score ingest verify them (a development token
 * from the embedded runtime's data directory, or the distributed runtime's JWT_HS256_SECRET).
 */
export interface ProductUnderTest {
  urls: { readApi: string; credentials: string; scoreIngest: string; notifier: string };
  /** A token with these claims: `org` for an organization's administrator, none for a scoring engine. */
  token(claims: { org?: string; scope: string }): Promise<string>;
}

/**
 * Runs `suite` against the embedded runtime, `npm start` on ephemeral loopback ports in a new data directory
 * (`prefix`) with `env`, started before it and stopped after; tokens are the runtime's development tokens.
 */
export function onTheEmbeddedRuntime(prefix: string, env: Record<string, string>, suite: (running: () => ProductUnderTest) => void): void {
  let started: EmbeddedOnDataDir | undefined;
  let devSecret: string;

  beforeAll(async () => {
    started = await startEmbeddedOnNewDataDir(prefix, env);
    devSecret = (await readDevSecret(started.dataDir))!;
  }, 90_000);

  afterAll(() => stopAndRemove(started?.product, started?.dataDir));

  suite(() => ({ urls: started!.product.urls, token: (claims) => signDevToken(devSecret, claims) }));
}
