import { isUtf8 } from 'node:buffer';
import { hash, randomUUID } from 'node:crypto';
import express, { type Request, type Router } from 'express';
import { leakedKeyReportSchema, SECRET_SCANNING_MAX_TOKENS, secretScanningReportSchema, type SecretScanningLabels } from '@rsd/contracts';
import {
  reporterOrigin,
  ApiError,
  jsonBody,
  answerOtherMethods,
  noStore,
  parsedBody,
  requireJsonBody,
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

/** The 401 of every report whose signature does not verify: the same words whatever failed, and nothing changes. */
const badSignature = (why: string) =>
  new ApiError('INVALID_SIGNATURE', `The report is not signed by a current secret-scanning key: ${why}`);

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
      // The signature covers the bytes as sent, so they are checked before anything reads them.
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      await verifySignature(deps.secretScanningKeys, req, body);
      const report = reportOf(body);
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

async function verifySignature(keys: SecretScanningKeys, req: Request, body: Buffer): Promise<void> {
  const identifier = req.get('github-public-key-identifier');
  const signature = req.get('github-public-key-signature');
  if (!identifier || !signature) throw badSignature('Github-Public-Key-Identifier and Github-Public-Key-Signature are required');
  const check = await keys.verify(identifier, body, signature);
  if (check === 'unknown-key') throw badSignature('the key identifier is not one of the provider’s keys');
  if (check === 'invalid') throw badSignature('the signature does not verify');
}

/** A signed body that is not such a report is refused whole: nothing changes. */
function reportOf(body: Buffer) {
  let parsed: unknown;
  try {
    if (!isUtf8(body)) throw new Error('not UTF-8');
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError('MALFORMED_JSON', 'The request body is not valid JSON');
  }
  if (Array.isArray(parsed) && parsed.length > SECRET_SCANNING_MAX_TOKENS) {
    throw new ApiError('PAYLOAD_TOO_LARGE', `A report carries at most ${SECRET_SCANNING_MAX_TOKENS} tokens`);
  }
  return parsedBody(secretScanningReportSchema, parsed, 'The body must be an array of { token, type, url, source }');
}
