import { createMemoryViewStore, memoryRateLimitStores } from '@rsd/embedded';
import { createLogger, loadConfig } from '@rsd/platform';
import type { ViewStore } from '@rsd/ports';
import { startApp, type RunningApp } from '@rsd/testkit';
import { buildApp, type ReadApiDeps } from '../app';
import { readApiConfigSchema } from '../config';
import { testClock, testSigningKeys } from './read-api-fixtures';

export interface ReadApiTestOptions extends Partial<ReadApiDeps> {
  /** The configuration's variables; every other one has its default. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The read API's dependencies as its tests use them: views and rate limits in memory, a fresh
 * signing key, a clock that stands still and no log; any of them may be given instead.
 */
export function testReadApiDeps({ env = {}, ...given }: ReadApiTestOptions = {}): ReadApiDeps {
  return {
    signingKeys: testSigningKeys(),
    config: loadConfig(readApiConfigSchema, env),
    views: createMemoryViewStore(),
    rateLimitStores: memoryRateLimitStores,
    clock: testClock(),
    log: createLogger('read-api', 'silent'),
    ...given,
  };
}

export interface RunningReadApi extends RunningApp {
  /** The views it serves, for the test to fill. */
  views: ViewStore;
}

/** The read API over `testReadApiDeps(options)`, listening on a loopback port. */
export async function startReadApi(options: ReadApiTestOptions = {}): Promise<RunningReadApi> {
  const deps = testReadApiDeps(options);
  return { ...(await startApp(buildApp(deps))), views: deps.views };
}
