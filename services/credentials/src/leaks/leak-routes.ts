import { hash, randomUUID } from 'node:crypto';
import express, { type Router } from 'express';
import { leakedKeyReportSchema, type SecretScanningLabels } from '@rsd/contracts';
import {
  reporterOrigin,
  jsonBody,
  answerOtherMethods,
  noStore,
  parsedBody,
  requireJsonBody,
  signedSecretScanningReport,
  type SecretScanningKeys,
} from '@rsd/platform';
import { labelledRouter } from '@rsd/observability';
import type { LimitCheck } from '@rsd/recipient-access';
import type { UseCaseDeps } from '../authorizations/use-case-deps';
import { endLeakedKeys, type LeakedKeyDeps } from './end-leaked-keys';

export interface LeakRoutesDeps extends Omit<UseCaseDeps, 'newEventId'> {
  apiKeyPrefix: string;
  /** GitHub's public keys, by identifier. */
  secretScanningKeys: SecretScanningKeys;
  /** Every report of a single key counts against the address's failed-authentication budget. */
  limitFailures: LimitCheck;
}

/** Room for a full report: 1,000 tokens with their URLs. */
const REPORT_BODY_LIMIT = '1mb';
/** Room for the longest key the schema allows (1,024 characters of up to 4 bytes each), so a longer one is a 400, not a 413. */
const KEY_BODY_LIMIT = '16kb';
export const SECRET_SCANNING_PATH = '/secret-scanning/github';
export const LEAKED_KEYS_PATH = '/leaked-keys';

/**
 * Decision 43's two doors, mounted under `/v1`, with no token: GitHub's signed secret-scanning
 * reports, and single keys found anywhere else.
 */
export function leakRoutes(deps: LeakRoutesDeps): Router {
  const useCaseDeps: LeakedKeyDeps = { ...deps, newEventId: randomUUID };
  const router = labelledRouter();

  router.use(noStore);

  router
    .route(SECRET_SCANNING_PATH)
    .post(requireJsonBody, express.raw({ type: 'application/json', limit: REPORT_BODY_LIMIT }), async (req, res) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const report = await signedSecretScanningReport(deps.secretScanningKeys, (name) => req.get(name), body);
      const { labels, publication } = await endLeakedKeys(
        { ...useCaseDeps, origin: reporterOrigin(req, res) },
        report.map((entry) => entry.token),
      );
      const answer: SecretScanningLabels = report.map((entry, index) => ({
        token_hash: hash('sha256', entry.token, 'hex'),
        token_type: entry.type,
        label: labels[index] ?? 'false_positive',
      }));
      // Decision 29: 200 once every change is in the event log; 202 while it is owed (GitHub takes either as received).
      res.status(publication === 'published' ? 200 : 202).json(answer);
    });

  router.route(LEAKED_KEYS_PATH).post(...jsonBody(KEY_BODY_LIMIT), async (req, res) => {
    const limit = await deps.limitFailures(req, res);
    if (limit.outcome === 'limited') throw limit.refusal;
    const { key } = parsedBody(leakedKeyReportSchema, req.body, 'The body must be {"key": "…"}');
    await endLeakedKeys({ ...useCaseDeps, origin: reporterOrigin(req, res) }, [key]);
    // The same answer whatever the key was, so that it tells nothing about which keys exist.
    res.status(202).end();
  });

  return answerOtherMethods(router);
}
