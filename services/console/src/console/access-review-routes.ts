import type { RequestHandler, Response, Router } from 'express';
import { accessReviewIdSchema, clientIdSchema } from '@rsd/contracts';
import { ApiError } from '@rsd/platform';
import type { ReportFormat } from '../credentials-api';
import {
  ACCESS_REVIEWS_PATH,
  accessReviewPage,
  accessReviewPath,
  accessReviewsPage,
  EMPTY_REVIEW_FORM,
  REVIEW_FORM_FIELDS,
  REVIEW_NOTICES,
  type ReviewForm,
} from './access-review-pages';
import { apiInstant } from './audit-log-pages';
import { firstOf, passedOn, type AuditLogRouteDeps } from './audit-log-routes';
import { passOnDownload } from './downloads';
import { noticeAmong, problemsByField, refusalOf } from './page-parts';

export interface AccessReviewRouteDeps extends AuditLogRouteDeps {
  /** A signed-in, same-origin form post with the session's CSRF token. */
  change: RequestHandler[];
}

/** Refusals of a decision the review's page shows above its grants; any other is the console's error page. */
const DECISION_REFUSALS = new Set(['VALIDATION_FAILED', 'ACCESS_REVIEW_ITEM_DECIDED', 'ACCESS_REVIEW_COMPLETED']);

/**
 * Decision 54's access reviews in the console, each through the credentials API as the signed-in
 * person: the list and the form that starts one, a review's page where each grant is kept or revoked,
 * and its report downloaded as the API answers it (CSV, or the signed JSON byte for byte).
 */
export function accessReviewRoutes(router: Router, deps: AccessReviewRouteDeps): void {
  const { api, signedIn, change, sessionOf, viewerOf, page } = deps;
  const local = ACCESS_REVIEWS_PATH.slice('/console'.length);
  // An id that cannot be one names no review: the API's 404, without asking it.
  const knownShape: RequestHandler = (req, _res, next) =>
    next(
      accessReviewIdSchema.safeParse(req.params.reviewId).success
        ? undefined
        : new ApiError('ACCESS_REVIEW_NOT_FOUND', 'No such access review'),
    );
  const listView = (req: { query: Record<string, unknown> }) => {
    const limit = firstOf(req.query.limit);
    return { olderThanFirstPage: req.query.cursor !== undefined, ...(limit ? { limit } : {}) };
  };
  const audit = (res: Response, what: string, fields: Record<string, unknown>) =>
    deps.log.info({ organizationId: sessionOf(res).organizationId, subject: sessionOf(res).subject, ...fields }, `console: ${what}`);

  router.get(local, signedIn, async (req, res) => {
    const view = { ...listView(req), form: EMPTY_REVIEW_FORM };
    try {
      page(res, 200, accessReviewsPage(viewerOf(res), await api.accessReviews(sessionOf(res), passedOn(req, ['limit', 'cursor'])), view));
    } catch (error) {
      // Paging the API refuses (a bad or repeated `limit` or `cursor`) is shown above the list.
      if (!(error instanceof ApiError) || error.code !== 'INVALID_PARAMETER') throw error;
      page(res, 400, accessReviewsPage(viewerOf(res), undefined, { ...view, problem: error.message }));
    }
  });

  router.post(local, ...change, async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const form: ReviewForm = { dueAt: textOf(body.dueAt).trim(), onOverdue: textOf(body.onOverdue) };
    try {
      // Blanks are absent: the API's own validation names what is missing.
      const started = await api.startAccessReview(sessionOf(res), {
        ...(form.dueAt ? { dueAt: apiInstant(form.dueAt) } : {}),
        ...(form.onOverdue ? { onOverdue: form.onOverdue } : {}),
      });
      audit(res, 'access review started', { reviewId: started.reviewId });
      back(res, started.reviewId, 'started');
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'VALIDATION_FAILED') throw error;
      const problems = problemsByField(error, REVIEW_FORM_FIELDS, { onOverdue: 'choose whether they are kept or revoked' });
      // The list as it stands, below the refused form: a list it cannot read is the error page, as ever.
      const reviews = await api.accessReviews(sessionOf(res), new URLSearchParams());
      page(res, 400, accessReviewsPage(viewerOf(res), reviews, { form, problems, olderThanFirstPage: false }));
    }
  });

  router.get(`${local}/:reviewId`, signedIn, knownShape, async (req, res) => {
    const { report } = await api.accessReviewReport(sessionOf(res), String(req.params.reviewId));
    page(res, 200, accessReviewPage(viewerOf(res), report, { notice: noticeAmong(REVIEW_NOTICES, req.query.notice) }));
  });

  router.post(`${local}/:reviewId/items/:clientId`, ...change, knownShape, async (req, res) => {
    const reviewId = String(req.params.reviewId);
    const clientId = String(req.params.clientId);
    // A Client ID that cannot be one is no item of any review: the API's 404, without asking it.
    if (!clientIdSchema.safeParse(clientId).success) throw new ApiError('ACCESS_REVIEW_ITEM_NOT_FOUND', 'No such grant in this review');
    const body = req.body as Record<string, unknown>;
    const decision = textOf(body.decision);
    const note = textOf(body.note).trim();
    try {
      await api.decideAccessReviewItem(sessionOf(res), reviewId, clientId, { decision, ...(note ? { note } : {}) });
    } catch (error) {
      // Decided meanwhile, the review completed, or a note too long: the review as it now stands, saying so.
      if (!(error instanceof ApiError) || !DECISION_REFUSALS.has(error.code)) throw error;
      const { report } = await api.accessReviewReport(sessionOf(res), reviewId);
      page(res, error.status, accessReviewPage(viewerOf(res), report, { problem: refusalOf(error) }));
      return;
    }
    audit(res, `access review item decided: ${decision}`, { reviewId, clientId });
    back(res, reviewId, decision === 'revoke' ? 'revoked' : 'kept', `#item-${clientId}`);
  });

  for (const format of ['csv', 'json'] as const satisfies readonly ReportFormat[]) {
    router.get(`${local}/:reviewId/report.${format}`, signedIn, knownShape, async (req, res) => {
      const session = sessionOf(res);
      const reviewId = String(req.params.reviewId);
      await passOnDownload(
        res,
        {
          filename: `access-review-${reviewId}.${format}`,
          what: 'access review report',
          log: deps.log,
          logged: { organizationId: session.organizationId, subject: session.subject, reviewId, format },
        },
        (signal) => api.exportAccessReviewReport(session, reviewId, format, signal),
      );
    });
  }
}

function back(res: Response, reviewId: string, notice: keyof typeof REVIEW_NOTICES, anchor = ''): void {
  res.redirect(303, `${accessReviewPath(reviewId)}?notice=${notice}${anchor}`);
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
