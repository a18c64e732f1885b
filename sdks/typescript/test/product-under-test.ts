import { readDevSecret, signDevToken } from '@rsd/platform';
import type { ScoreSubmission } from '@resilience-score/client';
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

const GRADES = ['Prioritize', 'Improve', 'Strengthen', 'Optimize', 'Sustain'] as const;
export const DAY = 86_400_000;

/** A score for `organizationId` dated `daysAgo` UTC days before now, with the grade its score falls in. */
export function aScoreDaysAgo(organizationId: string, score: number, daysAgo: number, calculatedAt?: string): ScoreSubmission {
  return {
    organizationId,
    scoreDate: new Date(Date.now() - daysAgo * DAY).toISOString().slice(0, 10),
    score,
    grade: GRADES[Math.min(Math.floor(score / 20), 4)]!,
    pillarScores: { structuralIntegrity: score, failureResistance: 50, deviceHealth: 60, recoveryCapability: 70 },
    ...(calculatedAt === undefined ? {} : { calculatedAt }),
  };
}
