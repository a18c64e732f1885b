import { randomUUID } from 'node:crypto';
import type { RequestHandler, Router } from 'express';
import {
  ACCESS_REVIEW_LIMIT,
  ACCESS_REVIEW_REPORT_JWS_TYPE,
  accessReviewIdSchema,
  utcInstantSchema,
  type AccessReviewReportLine,
  type SignedAccessReviewReport,
} from '@rsd/contracts';
import { labelledRouter } from '@rsd/observability';
import {
  ApiError,
  compactJwsSigner,
  cursorParts,
  exportFormatOf,
  fieldColumns,
  jsonBody,
  answerOtherMethods,
  noStore,
  opaqueCursor,
  pageLimitOf,
  singleQueryParameter,
  streamExport,
  tokenOrigin,
  type Column,
  type SigningKeys,
  type TokenVerifier,
} from '@rsd/platform';
import type { AccessLogStore, AccessReviewPosition } from '@rsd/ports';
import { organizationCallers } from '../authorizations/authorization-routes';
import type { UseCaseDeps } from '../authorizations/use-case-deps';
import { accessReviewReport, createAccessReview, decideAccessReviewItemFor, getAccessReview, listAccessReviews } from './access-reviews';

export interface AccessReviewRoutesDeps extends Omit<UseCaseDeps, 'newEventId'> {
  accessLog: Pick<AccessLogStore, 'usage' | 'dailyReads'>;
  verifyToken: TokenVerifier;
  /** The response-signing keys (decision 24) the report is signed with, as certificates are. */
  signingKeys: SigningKeys;
}

const COLLECTION = '/organizations/:organizationId/access-reviews';
const REVIEW = `${COLLECTION}/:reviewId` as const;
const ITEM = `${REVIEW}/items/:clientId` as const;
const REPORT = `${REVIEW}/report` as const;
const BODY_LIMIT = '16kb';

/** The report's CSV columns: the grant, its use, and what was decided of it, by whom and when. */
export const ACCESS_REVIEW_REPORT_COLUMNS: readonly Column<AccessReviewReportLine>[] = [
  ...fieldColumns<AccessReviewReportLine>('clientId', 'recipientType', 'recipientName'),
  { header: 'scopes', cell: (line) => line.scopes.join(' ') },
  ...fieldColumns<AccessReviewReportLine>('lastUsedAt', 'readsInPeriod', 'decision'),
  { header: 'overdue', cell: (line) => (line.decision === null ? null : String(line.overdue)) },
  ...fieldColumns<AccessReviewReportLine>('note', 'decidedAt'),
  { header: 'decidedByType', cell: (line) => line.decidedBy?.type ?? null },
  { header: 'decidedById', cell: (line) => line.decidedBy?.id ?? null },
  { header: 'decidedByVia', cell: (line) => line.decidedBy?.via ?? null },
];

/** Decision 54: `…/access-reviews`: create, list, show, decide an item, and the signed report. */
export function accessReviewRoutes(deps: AccessReviewRoutesDeps): Router {
  const useCaseDeps = { ...deps, newEventId: randomUUID };
  const sign = compactJwsSigner(deps.signingKeys, ACCESS_REVIEW_REPORT_JWS_TYPE);
  const { writer, reader } = organizationCallers(deps.verifyToken);
  // A review id that cannot be one is unknown without a lookup.
  const knownShape: RequestHandler = (req, _res, next) =>
    next(
      accessReviewIdSchema.safeParse(req.params.reviewId).success
        ? undefined
        : new ApiError('ACCESS_REVIEW_NOT_FOUND', 'No such access review'),
    );

  const router = labelledRouter();
  router.use(COLLECTION, noStore);

  router
    .route(COLLECTION)
    .get(...reader, async (req, res) => {
      const limit = pageLimitOf(req, ACCESS_REVIEW_LIMIT);
      const cursor = singleQueryParameter(req, 'cursor');
      const after = cursor === undefined ? undefined : positionOfCursor(cursor);
      const { items, next } = await listAccessReviews(useCaseDeps, req.params.organizationId, { limit, ...(after ? { after } : {}) });
      res.json({ items, nextCursor: next ? cursorAfter(next) : null });
    })
    .post(...writer, ...jsonBody(BODY_LIMIT), async (req, res) => {
      const body: unknown = req.body;
      const { organizationId } = req.params;
      const review = await createAccessReview({ ...useCaseDeps, origin: tokenOrigin(req, res) }, organizationId, body);
      res.status(201).location(`/v1/organizations/${organizationId}/access-reviews/${review.reviewId}`).json(review);
    });

  router.route(REVIEW).get(...reader, knownShape, async (req, res) => {
    res.json(await getAccessReview(useCaseDeps, req.params.organizationId, req.params.reviewId));
  });

  router.route(ITEM).put(...writer, knownShape, ...jsonBody(BODY_LIMIT), async (req, res) => {
    const body: unknown = req.body;
    const { organizationId, reviewId, clientId } = req.params;
    res.json(
      await decideAccessReviewItemFor({ ...useCaseDeps, origin: tokenOrigin(req, res) }, { organizationId, reviewId, clientId }, body),
    );
  });

  router.route(REPORT).get(...reader, knownShape, async (req, res) => {
    const report = await accessReviewReport(useCaseDeps, req.params.organizationId, req.params.reviewId);
    if (exportFormatOf(req) === 'csv') {
      await streamExport<AccessReviewReportLine>(res, 'csv', {
        columns: ACCESS_REVIEW_REPORT_COLUMNS,
        line: (line) => line,
        filename: `access-review-${report.reviewId}`,
        // The whole report is one page.
        read: (after) => Promise.resolve(after ? [] : report.items),
      });
      return;
    }
    const { jws } = await sign(report);
    const signed: SignedAccessReviewReport = { report, jws };
    res.json(signed);
  });

  return answerOtherMethods(router);
}

/** Opaque to callers: the versioned position of the page's last review (its start and id). */
function cursorAfter({ createdAt, reviewId }: AccessReviewPosition): string {
  return opaqueCursor(`r1|${createdAt}|${reviewId}`);
}

function positionOfCursor(cursor: string): AccessReviewPosition {
  return cursorParts(cursor, /^r1\|([^|]+)\|([^|]+)$/, ['createdAt', 'reviewId'], {
    maxLength: 200,
    valid: ({ createdAt, reviewId }) => utcInstantSchema.safeParse(createdAt).success && accessReviewIdSchema.safeParse(reviewId).success,
  });
}
