import { ACTOR_TYPES, AUDIT_ACTIONS, type AuditActor, type AuditLogPage } from '@rsd/contracts';
import { html, type Html } from './html';
import { choices, dataTable, messages, pageTop } from './page-parts';
import { detailPath, instant, layout, type Viewer } from './pages';

export const AUDIT_LOG_PATH = '/console/audit-log';

/** The filters the page and its downloads take, as the API names them (decision 54: "the same filters"). */
export const AUDIT_FILTERS = ['from', 'to', 'actor', 'action', 'clientId'] as const;
export type AuditFilters = Record<(typeof AUDIT_FILTERS)[number], string>;

/** The actions in words, for the filter's choices and the table. */
export const AUDIT_ACTION_LABELS: Record<(typeof AUDIT_ACTIONS)[number], string> = {
  'authorization.created': 'Authorization created',
  'authorization.revoked': 'Authorization revoked',
  'authorization.key_rotated': 'Key rotated',
  'authorization.key_claimed': 'Key claimed by its link',
  'authorization.claimed_into_account': 'Claimed into a portfolio',
  'authorization.expired': 'Authorization expired',
  'authorization.released': 'Released by the recipient',
  'authorization.offer_accepted': 'Offer accepted',
  'authorization.offer_declined': 'Offer declined',
  'authorization.previous_key_revoked': 'Previous key revoked',
  'recipient_account.created': 'Portfolio created',
  'recipient_account.key_rotated': 'Portfolio key rotated',
  'recipient_account.key_revoked': 'Portfolio key revoked',
  'webhook.created': 'Recipient webhook created',
  'webhook.updated': 'Recipient webhook changed',
  'webhook.deleted': 'Recipient webhook deleted',
  'webhook.secret_rotated': 'Recipient webhook secret rotated',
  'webhook.disabled': 'Recipient webhook disabled',
  'alert_subscription.created': 'Alert webhook added',
  'alert_subscription.updated': 'Alert webhook changed',
  'alert_subscription.deleted': 'Alert webhook deleted',
  'alert_subscription.secret_rotated': 'Alert webhook secret rotated',
  'access_review.created': 'Access review started',
  'access_review.item_decided': 'Access review decision',
  'access_review.completed': 'Access review completed',
};

const VIA_LABELS = { api: 'the API', console: 'the console', cli: 'the rsd CLI', sdk: 'an SDK' } as const;

/** A filter's link: the page (or a download) with the filters given, blanks left out, and `extra` after them. */
export function auditLogHref(path: string, filters: AuditFilters, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams();
  for (const name of AUDIT_FILTERS) if (filters[name]) query.set(name, filters[name]);
  for (const [name, value] of Object.entries(extra)) query.set(name, value);
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}

/**
 * Decision 54 in the console: the organization's audit trail, newest first, with the API's filters,
 * paged by its cursor, and the whole filtered trail to download as CSV or NDJSON.
 */
export function auditLogPage(
  viewer: Viewer,
  log: AuditLogPage | undefined,
  options: { filters: AuditFilters; limit?: string; olderThanFirstPage: boolean; problem?: string },
): Html {
  const { filters } = options;
  const paging: Record<string, string> = options.limit ? { limit: options.limit } : {};
  return layout(
    'Audit log',
    html`${pageTop('Audit log', [])}
      <p>Who changed your authorizations, the portfolios holding them, their webhooks and your alert webhooks: when, how and from where.</p>
      ${messages(options)}
      <form method="get" action="${AUDIT_LOG_PATH}" class="inline filters" aria-label="Filter the audit log">
        <label for="from">From (UTC)</label>
        <input id="from" name="from" type="datetime-local" step="1" value="${localValue(filters.from)}" />
        <label for="to">Before (UTC)</label>
        <input id="to" name="to" type="datetime-local" step="1" value="${localValue(filters.to)}" />
        <label for="actor">Actor</label>
        <input id="actor" name="actor" type="text" value="${filters.actor}" aria-describedby="actor-hint" />
        <span id="actor-hint" class="hint">an id as listed, or a kind: ${ACTOR_TYPES.join(', ')}</span>
        <label for="action">Action</label>
        <select id="action" name="action">
          <option value="">Any</option>
          ${choices(
            AUDIT_ACTIONS.map((action) => ({ value: action, label: AUDIT_ACTION_LABELS[action] })),
            filters.action,
          )}
        </select>
        <label for="clientId">Client ID</label>
        <input id="clientId" name="clientId" type="text" value="${filters.clientId}" />
        <button type="submit">Filter</button>
        <a href="${AUDIT_LOG_PATH}">Clear filters</a>
      </form>
      <p class="actions">
        Download every entry these filters match:
        <a href="${auditLogHref(`${AUDIT_LOG_PATH}/export.csv`, filters)}" download>CSV</a>
        <a href="${auditLogHref(`${AUDIT_LOG_PATH}/export.ndjson`, filters)}" download>NDJSON</a>
      </p>
      ${log ? entriesTable(log) : ''}
      <nav class="pages" aria-label="Audit log pages">
        ${options.olderThanFirstPage ? html`<a href="${auditLogHref(AUDIT_LOG_PATH, filters, paging)}">Newest entries</a>` : ''}
        ${log?.nextCursor ? html`<a href="${auditLogHref(AUDIT_LOG_PATH, filters, { ...paging, cursor: log.nextCursor })}">Older entries</a>` : ''}
      </nav>`,
    viewer,
  );
}

function entriesTable(log: AuditLogPage): Html {
  if (log.items.length === 0) return html`<p class="empty">No changes match.</p>`;
  return dataTable({
    caption: 'Audit log, newest first',
    columns: ['Time (UTC)', 'Action', 'Actor', 'Authorization', 'Address', 'Request ID'],
    rows: log.items.map(
      (entry) =>
        html`<tr>
          <td>${instant(entry.at, '')}</td>
          <td>${AUDIT_ACTION_LABELS[entry.action]} <code>${entry.action}</code></td>
          <td>${actorOf(entry.actor)}</td>
          <td>${entry.clientId ? html`<a href="${detailPath(entry.clientId)}">${entry.clientId}</a>` : ''}</td>
          <td>${entry.address ?? ''}</td>
          <td>${entry.requestId ? html`<code>${entry.requestId}</code>` : ''}</td>
        </tr>`,
    ),
  });
}

export function actorOf(actor: AuditActor): Html {
  return html`${actor.type}
    <span class="id">${actor.id}</span>${actor.via ? html` <span class="hint">through ${VIA_LABELS[actor.via]}</span>` : ''}`;
}

const LOCAL_INSTANT = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(?:\.\d{1,3})?)?(Z)?$/;

/** An instant as the date-time field shows it (UTC, no offset); anything else is left blank. */
export function localValue(value: string): string {
  const match = LOCAL_INSTANT.exec(value);
  return match ? `${match[1]}${match[2] ?? ''}` : '';
}

/**
 * The date-time field's value (`2026-12-02T09:30`, the console's times being UTC) as the API's instant
 * with an offset; anything else as given, for the API to refuse by name.
 */
export function apiInstant(value: string): string {
  const match = LOCAL_INSTANT.exec(value);
  if (!match || match[3]) return value;
  return `${match[1]}${match[2] ?? ':00'}Z`;
}
