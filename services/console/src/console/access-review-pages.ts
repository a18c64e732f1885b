import {
  ACCESS_REVIEW_DECISIONS,
  ACCESS_REVIEW_NOTE_MAX,
  type AccessReviewDecision,
  type AccessReviewPage,
  type AccessReviewProgress,
  type AccessReviewReport,
  type AccessReviewReportLine,
  type AccessReviewSummary,
} from '@rsd/contracts';
import { actorOf, localValue } from './audit-log-pages';
import { html, type Html } from './html';
import { choices, dataTable, formProblems, messages, pageTop, type FormProblems } from './page-parts';
import { csrfField, detailPath, instant, layout, RECIPIENT_TYPE_LABELS, SCOPE_LABELS, type Viewer } from './pages';

// Decision 54's access reviews in the console: the organization's reviews, a form to start one, and a
// review's page where each grant is kept or revoked, with its report to download.

export const ACCESS_REVIEWS_PATH = '/console/access-reviews';
export const accessReviewPath = (reviewId: string) => `${ACCESS_REVIEWS_PATH}/${encodeURIComponent(reviewId)}`;

/** The start form as typed: the due time as the date-time field gives it (UTC), and what becomes of the undecided. */
export interface ReviewForm {
  dueAt: string;
  onOverdue: string;
}
export const REVIEW_FORM_FIELDS = ['dueAt', 'onOverdue'] as const satisfies readonly (keyof ReviewForm)[];
export const EMPTY_REVIEW_FORM: ReviewForm = { dueAt: '', onOverdue: '' };
export type ReviewProblems = FormProblems<keyof ReviewForm>;

const REVIEW_FIELD_NAMES = { form: 'Request', dueAt: 'Due', onOverdue: 'Still undecided at the due time' } as const;

/** What becomes of an item still undecided at the due time, as the choice reads. */
const ON_OVERDUE_LABELS: Record<AccessReviewDecision, string> = { keep: 'Kept', revoke: 'Revoked' };

/** What a review's page says after a start or a decision: the words a redirect's `?notice=` names. */
export const REVIEW_NOTICES = {
  started: 'Review started. Keep or revoke each grant below before the due time.',
  kept: 'Kept.',
  revoked: 'Revoked. Reads with that grant are refused from now on.',
} as const;

/** The organization's reviews, newest first, a page at a time, and the form that starts one. */
export function accessReviewsPage(
  viewer: Viewer,
  reviews: AccessReviewPage | undefined,
  options: { form: ReviewForm; problems?: ReviewProblems; problem?: string; limit?: string; olderThanFirstPage: boolean },
): Html {
  const fields = formProblems(options.problems ?? {}, REVIEW_FIELD_NAMES);
  const paging = options.limit ? `?limit=${encodeURIComponent(options.limit)}` : '';
  const list =
    reviews && reviews.items.length === 0 && !options.olderThanFirstPage
      ? html`<p class="empty">No access reviews yet. Start one to have each grant kept or revoked by a reviewer.</p>`
      : reviews
        ? dataTable({
            caption: 'Access reviews, newest first',
            columns: ['Started (UTC)', 'Status', 'Due (UTC)', 'Progress', 'Undecided at the due time'],
            rows: reviews.items.map(
              (review) =>
                html`<tr>
                  <th scope="row"><a href="${accessReviewPath(review.reviewId)}">${instant(review.createdAt, '')}</a></th>
                  <td>${statusBadge(review)}</td>
                  <td>${instant(review.dueAt, '')}</td>
                  <td>${progressOf(review.progress)}</td>
                  <td>${ON_OVERDUE_LABELS[review.onOverdue]}</td>
                </tr>`,
            ),
          })
        : '';
  return layout(
    'Access reviews',
    html`${pageTop('Access reviews', [])}
      <p>
        A review takes every grant active when it starts; a reviewer keeps or revokes each. Its report, signed, is the evidence that access
        was reviewed.
      </p>
      ${messages({ problem: options.problem })} ${list}
      <nav class="pages" aria-label="Access review pages">
        ${options.olderThanFirstPage ? html`<a href="${ACCESS_REVIEWS_PATH}${paging}">Newest reviews</a>` : ''}
        ${
          reviews?.nextCursor
            ? html`<a
                href="${ACCESS_REVIEWS_PATH}?${new URLSearchParams({ ...(options.limit ? { limit: options.limit } : {}), cursor: reviews.nextCursor }).toString()}"
                >Older reviews</a
              >`
            : ''
        }
      </nav>
      <section aria-labelledby="new-review-heading" class="panel">
        <h2 id="new-review-heading">Start a review</h2>
        ${fields.summary('The review was not started.')}
        <form method="post" action="${ACCESS_REVIEWS_PATH}" class="stack" novalidate>
          ${csrfField(viewer)}
          <label for="dueAt">Due <span class="hint">(UTC)</span></label>
          <input id="dueAt" name="dueAt" type="datetime-local" value="${localValue(options.form.dueAt)}" ${fields.described('dueAt')} />
          ${fields.under('dueAt')}
          <label for="onOverdue">Grants still undecided at the due time are</label>
          <select id="onOverdue" name="onOverdue" ${fields.described('onOverdue')}>
            <option value="">Choose…</option>
            ${choices(
              ACCESS_REVIEW_DECISIONS.map((decision) => ({ value: decision, label: decision === 'keep' ? 'Kept' : 'Revoked' })),
              options.form.onOverdue,
            )}
          </select>
          ${fields.under('onOverdue')}
          <div class="actions"><button type="submit">Start the review</button></div>
        </form>
      </section>`,
    viewer,
  );
}

/**
 * One review from its report (which alone has each grant's last use and reads in the period): its facts
 * and progress, each grant with what was decided, by whom and when, the buttons that decide an
 * undecided one while the review is open, and the report's downloads.
 */
export function accessReviewPage(
  viewer: Viewer,
  report: AccessReviewReport,
  options: { notice?: string | undefined; problem?: Html | undefined } = {},
): Html {
  const path = accessReviewPath(report.reviewId);
  const open = report.status === 'open';
  return layout(
    'Access review',
    html`${pageTop('Access review', [{ href: ACCESS_REVIEWS_PATH, label: 'Access reviews' }], options)}
      <dl class="facts">
        <dt>Status</dt>
        <dd>${statusBadge(report)}</dd>
        <dt>Review ID</dt>
        <dd><code>${report.reviewId}</code></dd>
        <dt>Started</dt>
        <dd>${instant(report.createdAt, '')} by ${actorOf(report.createdBy)}</dd>
        <dt>Due</dt>
        <dd>${instant(report.dueAt, '')}</dd>
        <dt>Undecided at the due time</dt>
        <dd>${ON_OVERDUE_LABELS[report.onOverdue]}</dd>
        ${
          report.completedAt
            ? html`<dt>Completed</dt>
                <dd>${instant(report.completedAt, '')}</dd>`
            : ''
        }
        <dt>Progress</dt>
        <dd>${progressOf(report.progress)}</dd>
        <dt>Reads counted</dt>
        <dd>${instant(report.period.from, '')} to ${instant(report.period.to, '')}</dd>
      </dl>
      <p class="actions">
        Download the report:
        <a href="${path}/report.csv" download>CSV</a>
        <a href="${path}/report.json" download>Signed JSON</a>
        <span class="hint">(<code>rsd verify</code> checks the signed one)</span>
      </p>
      <section aria-labelledby="items-heading">
        <h2 id="items-heading">Grants under review</h2>
        ${
          report.items.length === 0
            ? html`<p class="empty">No grant was active when the review started: there is nothing to decide.</p>`
            : dataTable({
                caption: 'Grants under review, by Client ID',
                columns: ['Grant', 'Recipient', 'Last use', 'Reads in the period', 'Decision', 'By', 'When', ...(open ? ['Decide'] : [])],
                rows: report.items.map((line) => itemRow(viewer, path, line, open)),
              })
        }
      </section>`,
    viewer,
  );
}

function itemRow(viewer: Viewer, path: string, line: AccessReviewReportLine, open: boolean): Html {
  const noteId = `note-${line.clientId}`;
  return html`<tr id="item-${line.clientId}">
    <th scope="row">
      <a href="${detailPath(line.clientId)}">${line.clientId}</a>
      <span class="hint">${line.scopes.map((scope) => SCOPE_LABELS[scope]).join(', ')}</span>
    </th>
    <td>
      ${line.recipientName ?? `Unnamed ${RECIPIENT_TYPE_LABELS[line.recipientType].toLowerCase()}`}
      <span class="hint">${RECIPIENT_TYPE_LABELS[line.recipientType]}</span>
    </td>
    <td>${instant(line.lastUsedAt, 'Never')}</td>
    <td>${line.readsInPeriod}</td>
    <td>
      ${line.decision ? html`${ON_OVERDUE_LABELS[line.decision]}${line.overdue ? html` <span class="hint">at the due time</span>` : ''}` : 'Undecided'}
      ${line.note ? html`<span class="hint">${line.note}</span>` : ''}
    </td>
    <td>${line.decidedBy ? actorOf(line.decidedBy) : ''}</td>
    <td>${instant(line.decidedAt, '')}</td>
    ${
      open
        ? html`<td>
            ${
              line.decision
                ? ''
                : html`<form method="post" action="${path}/items/${encodeURIComponent(line.clientId)}" class="inline">
                    ${csrfField(viewer)}
                    <label for="${noteId}">Note <span class="hint">(optional)</span></label>
                    <input id="${noteId}" name="note" maxlength="${ACCESS_REVIEW_NOTE_MAX}" />
                    <button type="submit" name="decision" value="keep" class="secondary">Keep</button>
                    <button type="submit" name="decision" value="revoke" class="danger">Revoke</button>
                  </form>`
            }
          </td>`
        : ''
    }
  </tr>`;
}

function progressOf(progress: AccessReviewProgress): Html {
  if (progress.total === 0) return html`Nothing to decide`;
  return html`<progress max="${progress.total}" value="${progress.decided}" aria-hidden="true"></progress> ${progress.decided} of
    ${progress.total} decided: ${progress.kept} kept, ${progress.revoked} revoked, ${progress.pending} pending`;
}

function statusBadge(review: Pick<AccessReviewSummary, 'status'>): Html {
  return html`<span class="status ${review.status}">${review.status === 'open' ? 'Open' : 'Completed'}</span>`;
}
