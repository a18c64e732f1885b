import {
  CLAIM_VALID_SECONDS,
  DEFAULT_OVERLAP_SECONDS,
  RECIPIENT_TYPES,
  SCOPES,
  type AccessLogEntry,
  type AccessLogPage,
  type Alert,
  type AlertType,
  type Authorization,
  type RecipientType,
  type Scope,
} from '@rsd/contracts';
import type { DayOfReads as DailyReads } from '@rsd/contracts';
import { html, type Html } from './html';
import { choices, dataTable, formProblems, pageTop, secretValue, type FormProblems } from './page-parts';
import { readsChart } from './reads-chart';

// Server-rendered pages of the console: plain HTML and one stylesheet, one small script for the copy button.

export const RECIPIENT_TYPE_LABELS: Record<RecipientType, string> = {
  insurance_provider: 'Insurance provider',
  auditor: 'Auditor',
  regulatory_body: 'Regulatory body',
  partner: 'Partner',
};

export const SCOPE_LABELS: Record<Scope, string> = {
  qr_score: 'Score and grade',
  score_trend: 'Score history',
  pillar_breakdown: 'Pillar breakdown',
};

export const OVERLAP_CHOICES = [
  { seconds: 0, label: 'No overlap: the current key stops working now' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: DEFAULT_OVERLAP_SECONDS, label: '24 hours' },
  { seconds: 604_800, label: '7 days' },
] as const;

export interface Viewer {
  displayName: string;
  organizationId: string;
  csrfToken: string;
}

export function layout(title: string, body: Html, viewer?: Viewer): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Resilience Score data access</title>
        <link rel="icon" href="/console/assets/icon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href="/console">Resilience Score · Data access</a>
          ${
            viewer
              ? html`<div class="who">
                  <span>Signed in as <strong>${viewer.displayName}</strong> for <strong>${viewer.organizationId}</strong></span>
                  <form method="post" action="/console/sign-out">
                    ${csrfField(viewer)}
                    <button type="submit" class="link">Sign out</button>
                  </form>
                </div>`
              : ''
          }
        </header>
        <main id="main">${body}</main>
      </body>
    </html>`;
}

export const csrfField = (viewer: Viewer) => html`<input type="hidden" name="_csrf" value="${viewer.csrfToken}" />`;

export function signInPage(options: { oidc: boolean; problem?: string }): Html {
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
      ${options.problem ? html`<p class="problem" role="alert">${options.problem}</p>` : ''}
      <p>Manage who may read your organization's resilience score: grant, watch, rotate and revoke access.</p>
      ${
        options.oidc
          ? html`<p><a class="button" href="/console/sign-in">Sign in with your identity provider</a></p>`
          : html`<p>
              Sign-in with an identity provider is not configured on this service. On the embedded runtime (<code>npm start</code>), open
              the one-time sign-in link it prints at start.
            </p>`
      }`,
  );
}

export function listPage(viewer: Viewer, authorizations: readonly Authorization[], alerts: readonly Alert[] = []): Html {
  const body =
    authorizations.length === 0
      ? html`<div class="empty">
          <p><strong>No authorizations yet.</strong></p>
          <p>Create one to let an insurer, auditor, regulator or partner read your resilience score.</p>
        </div>`
      : dataTable({
          caption: `Authorizations of ${viewer.organizationId}, newest first`,
          columns: ['Recipient', 'Type', 'Scopes', 'Status', 'Portfolio', 'Expires', 'Last used', 'Reads (24 h / 30 d)'],
          rows: authorizations.map(
            (authorization) =>
              html`<tr>
                <th scope="row">
                  <a href="${detailPath(authorization.clientId)}">${recipientOf(authorization)}</a>
                  <span class="id">${authorization.clientId}</span>
                </th>
                <td>${RECIPIENT_TYPE_LABELS[authorization.recipientType]}</td>
                <td>${authorization.scopes.map((scope) => SCOPE_LABELS[scope]).join(', ')}</td>
                <td>${statusBadge(authorization)}</td>
                <td>${portfolioOf(authorization)}</td>
                <td>${instant(authorization.expiresAt, 'Never')}</td>
                <td>${instant(authorization.lastUsedAt, 'Not yet')}</td>
                <td>${authorization.usage.last24h} / ${authorization.usage.last30d}</td>
              </tr>`,
          ),
        });
  return layout(
    'Authorizations',
    html`<div class="heading">
        <h1>Authorizations</h1>
        <a href="/console/audit-log">Audit log</a>
        <a href="/console/access-reviews">Access reviews</a>
        <a class="button" href="/console/authorizations/new">New authorization</a>
      </div>
      ${body} ${alertsSection(authorizations, alerts)}`,
    viewer,
  );
}

export const ALERT_LABELS: Record<AlertType, string> = {
  'authorization.expiring': 'Expires soon',
  'authorization.first_use': 'First used',
  'authorization.new_address': 'Read from a new address',
  'authorization.auth_failures': 'Failed authentications',
  'authorization.key_leaked': 'Key reported leaked: revoked',
  'authorization.released': 'Released by the recipient',
  'access_review.due_soon': 'Access review due within 3 days',
  'access_review.completed': 'Access review completed',
};

/** Decision 44: the organization's last alerts, newest first, each naming its grant and what happened. */
function alertsSection(authorizations: readonly Authorization[], alerts: readonly Alert[]): Html {
  const byClientId = new Map(authorizations.map((authorization) => [authorization.clientId, authorization]));
  const details = (alert: Alert): string => {
    if (alert.address) return `From ${alert.address}`;
    if (alert.failures) return `${alert.failures} failures within 5 minutes`;
    if (alert.expiresAt) return `Expires ${alert.expiresAt}`;
    return '';
  };
  const rows = alerts.map((alert) => {
    const authorization = byClientId.get(alert.clientId);
    return html`<tr>
      <td>${instant(alert.at, '')}</td>
      <th scope="row">
        <a href="${detailPath(alert.clientId)}">${authorization ? recipientOf(authorization) : alert.clientId}</a>
        <span class="id">${alert.clientId}</span>
      </th>
      <td>${ALERT_LABELS[alert.type]}</td>
      <td>${details(alert)}</td>
    </tr>`;
  });
  return html`<section aria-labelledby="alerts-heading">
    <div class="heading">
      <h2 id="alerts-heading">Alerts</h2>
      <a href="/console/alert-webhooks">Alert webhooks</a>
    </div>
    ${
      alerts.length === 0
        ? html`<p class="empty">
            No alerts yet. First uses, new addresses, failed authentications, expiries ahead, leaked keys and releases appear here.
          </p>`
        : dataTable({
            caption: `The last ${alerts.length} alerts, newest first`,
            columns: ['When', 'Authorization', 'Alert', 'Details'],
            rows,
          })
    }
  </section>`;
}

/** What the person typed, kept as typed, so a validation error loses nothing. */
export interface CreateForm {
  recipientType: string;
  recipientName: string;
  scopes: string[];
  expiresAt: string;
  allowedCidrs: string;
  /** Decision 38: `response` (the key shown now) or `claimLink`. */
  keyDelivery: string;
  claimValidSeconds: string;
}

export const EMPTY_CREATE_FORM: CreateForm = {
  recipientType: '',
  recipientName: '',
  scopes: [],
  expiresAt: '',
  allowedCidrs: '',
  keyDelivery: 'response',
  claimValidSeconds: String(CLAIM_VALID_SECONDS.default),
};

export const CLAIM_VALIDITY_CHOICES = [
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
  { seconds: CLAIM_VALID_SECONDS.default, label: '72 hours' },
  { seconds: CLAIM_VALID_SECONDS.max, label: '7 days' },
] as const;

/** Problems by field; `form` for one that names no field. */
export type FieldProblems = FormProblems<keyof CreateForm>;

export function createPage(viewer: Viewer, form: CreateForm, problems: FieldProblems = {}): Html {
  const fields = formProblems(problems, FIELD_NAMES);
  const { described, under: fieldProblem } = fields;
  return layout(
    'New authorization',
    html`<h1>New authorization</h1>
      ${fields.summary('The authorization was not created.')}
      <form method="post" action="/console/authorizations" class="stack" novalidate>
        ${csrfField(viewer)}
        <label for="recipientType">Recipient type</label>
        <select id="recipientType" name="recipientType" required${described('recipientType')}>
          <option value="">Choose…</option>
          ${choices(
            RECIPIENT_TYPES.map((type) => ({ value: type, label: RECIPIENT_TYPE_LABELS[type] })),
            form.recipientType,
          )}
        </select>
        ${fieldProblem('recipientType')}
        <label for="recipientName">Recipient name <span class="hint">(optional)</span></label>
        <input id="recipientName" name="recipientName" maxlength="200" value="${form.recipientName}" ${described('recipientName')} />
        ${fieldProblem('recipientName')}
        <fieldset id="scopes" ${described('scopes')}>
          <legend>Data the recipient may read</legend>
          ${SCOPES.map(
            (scope) =>
              html`<label class="check"
                ><input type="checkbox" name="scopes" value="${scope}" ${form.scopes.includes(scope) ? html` checked` : html``} />
                ${SCOPE_LABELS[scope]} <code>${scope}</code></label
              >`,
          )}
        </fieldset>
        ${fieldProblem('scopes')}
        <label for="expiresAt">Expires <span class="hint">(optional; valid through the end of that day, UTC)</span></label>
        <input id="expiresAt" name="expiresAt" type="date" value="${form.expiresAt}" ${described('expiresAt')} />
        ${fieldProblem('expiresAt')}
        <label for="allowedCidrs">Allowed addresses <span class="hint">(optional; one address or CIDR range per line)</span></label>
        <textarea id="allowedCidrs" name="allowedCidrs" rows="3" ${described('allowedCidrs')}>${form.allowedCidrs}</textarea>
        ${fieldProblem('allowedCidrs')}
        <fieldset id="keyDelivery" ${described('keyDelivery')}>
          <legend>How the recipient gets the key</legend>
          <label class="check"
            ><input type="radio" name="keyDelivery" value="response" ${form.keyDelivery !== 'claimLink' ? html` checked` : html``} /> Show
            me the key now; I hand it over</label
          >
          <label class="check"
            ><input type="radio" name="keyDelivery" value="claimLink" ${form.keyDelivery === 'claimLink' ? html` checked` : html``} /> A
            one-time link I send to the recipient, who creates the key; nobody else ever sees it</label
          >
        </fieldset>
        ${fieldProblem('keyDelivery')}
        <label for="claimValidSeconds">The link works for <span class="hint">(with a one-time link)</span></label>
        <select id="claimValidSeconds" name="claimValidSeconds" ${described('claimValidSeconds')}>
          ${choices(CLAIM_VALIDITY_CHOICES, form.claimValidSeconds)}
        </select>
        ${fieldProblem('claimValidSeconds')}
        <div class="actions">
          <button type="submit">Create authorization</button>
          <a href="/console">Cancel</a>
        </div>
      </form>`,
    viewer,
  );
}

const FIELD_NAMES: Record<keyof CreateForm | 'form', string> = {
  form: 'Request',
  recipientType: 'Recipient type',
  recipientName: 'Recipient name',
  scopes: 'Data the recipient may read',
  expiresAt: 'Expires',
  allowedCidrs: 'Allowed addresses',
  keyDelivery: 'How the recipient gets the key',
  claimValidSeconds: 'The link works for',
};

export interface IssuedKey {
  authorization: Authorization;
  apiKey: string;
  kind: 'created' | 'rotated';
  /** Rotation only: until when the previous key still works (null: it stopped at once). */
  previousKeyExpiresAt?: string | null;
  /** The event log did not take the change in time: it is recorded and takes effect shortly. */
  pending: boolean;
}

export function keyPage(viewer: Viewer, issued: IssuedKey): Html {
  const { authorization, apiKey, kind } = issued;
  return layout(
    kind === 'created' ? 'Authorization created' : 'New key issued',
    html`<h1>${kind === 'created' ? 'Authorization created' : 'New key issued'}</h1>
      <div class="warning" role="note">
        <p>
          <strong>This key is shown once.</strong> Copy it now and give it to ${recipientOf(authorization)} through a secure channel. It
          cannot be shown again; if it is lost, rotate the key.
        </p>
      </div>
      <dl class="facts">
        <dt>Client ID</dt>
        <dd><code id="client-id">${authorization.clientId}</code></dd>
        <dt>API key</dt>
        <dd>${secretValue('api-key', apiKey, 'Copy key')}</dd>
      </dl>
      ${
        kind === 'rotated'
          ? html`<p>
              ${
                issued.previousKeyExpiresAt
                  ? html`The previous key keeps working until ${instant(issued.previousKeyExpiresAt, '')}.`
                  : 'The previous key no longer works.'
              }
            </p>`
          : ''
      }
      ${issued.pending ? html`<p class="notice">The change is recorded and takes effect within moments.</p>` : ''}
      <p><a href="${detailPath(authorization.clientId)}">View the authorization</a> · <a href="/console">All authorizations</a></p>`,
    viewer,
  );
}

/** Decision 38: the link, shown once; the organization never sees the key. */
export function claimLinkPage(viewer: Viewer, authorization: Authorization, claim: { url: string; expiresAt: string }): Html {
  return layout(
    'Claim link issued',
    html`<h1>Claim link issued</h1>
      <div class="warning" role="note">
        <p>
          <strong>This link is shown once and works once.</strong> Send it to ${recipientOf(authorization)}: opening it shows what is
          granted, and the key is created when they claim it. Nobody else ever sees the key.
        </p>
      </div>
      <dl class="facts">
        <dt>Client ID</dt>
        <dd><code id="client-id">${authorization.clientId}</code></dd>
        <dt>Claim link</dt>
        <dd>${secretValue('claim-url', claim.url, 'Copy link')}</dd>
        <dt>Link works until</dt>
        <dd>${instant(claim.expiresAt, '')}</dd>
      </dl>
      <p><a href="${detailPath(authorization.clientId)}">View the authorization</a> · <a href="/console">All authorizations</a></p>`,
    viewer,
  );
}

export function detailPage(
  viewer: Viewer,
  authorization: Authorization,
  accessLog: AccessLogPage,
  options: {
    notice?: string;
    problem?: string;
    olderThanFirstPage: boolean;
    daily: readonly DailyReads[];
    /** Decision 55: the latest certificates the recipient fetched, from the access log, newest first. */
    certificates?: readonly AccessLogEntry[];
  },
): Html {
  const active = authorization.status === 'active';
  // An offer waiting for its account is revoked as any grant.
  const revocable = active || authorization.status === 'pending';
  return layout(
    recipientOf(authorization),
    html`${pageTop(recipientOf(authorization), [], options)}
      <dl class="facts">
        <dt>Client ID</dt>
        <dd><code>${authorization.clientId}</code></dd>
        <dt>Type</dt>
        <dd>${RECIPIENT_TYPE_LABELS[authorization.recipientType]}</dd>
        <dt>Scopes</dt>
        <dd>${authorization.scopes.map((scope) => SCOPE_LABELS[scope]).join(', ')}</dd>
        <dt>Status</dt>
        <dd>${statusBadge(authorization)}</dd>
        <dt>Created</dt>
        <dd>${instant(authorization.createdAt, '')}</dd>
        <dt>Expires</dt>
        <dd>${instant(authorization.expiresAt, 'Never')}</dd>
        ${
          authorization.revokedAt
            ? html`<dt>Revoked</dt>
                <dd>${instant(authorization.revokedAt, '')}${revokedBy(authorization)}</dd>`
            : ''
        }
        <dt>Portfolio</dt>
        <dd>${portfolioOf(authorization)}</dd>
        <dt>Allowed addresses</dt>
        <dd>${authorization.allowedCidrs ? authorization.allowedCidrs.join(', ') : 'Any'}</dd>
        <dt>Key</dt>
        <dd>${keyState(authorization)}</dd>
        <dt>Last used</dt>
        <dd>${instant(authorization.lastUsedAt, 'Not yet')}</dd>
        <dt>Reads</dt>
        <dd>${authorization.usage.last24h} in the last 24 hours, ${authorization.usage.last30d} in the last 30 days</dd>
      </dl>
      ${
        active && !authorization.keyClaimed
          ? html`<section aria-labelledby="claim-link-heading" class="panel">
              <h2 id="claim-link-heading">Send a new claim link</h2>
              <p>The recipient has not claimed the key yet. A new link replaces the one sent before, which stops working.</p>
              <form method="post" action="${detailPath(authorization.clientId)}/claim-link" class="inline">
                ${csrfField(viewer)}
                <label for="claimValidSeconds">The link works for</label>
                <select id="claimValidSeconds" name="claimValidSeconds">
                  ${choices(CLAIM_VALIDITY_CHOICES, CLAIM_VALID_SECONDS.default)}
                </select>
                <button type="submit">Issue a new link</button>
              </form>
            </section>`
          : ''
      }
      ${
        active && authorization.keyClaimed && !authorization.recipientAccountId
          ? html`<section aria-labelledby="rotate-heading" class="panel">
              <h2 id="rotate-heading">Rotate the key</h2>
              <p>
                A new key for the same recipient and scopes. The current key can keep working for a while, so the recipient can switch
                without a gap.
              </p>
              <form method="post" action="${detailPath(authorization.clientId)}/rotate" class="inline">
                ${csrfField(viewer)}
                <label for="overlapSeconds">Current key keeps working for</label>
                <select id="overlapSeconds" name="overlapSeconds">
                  ${choices(OVERLAP_CHOICES, DEFAULT_OVERLAP_SECONDS)}
                </select>
                <button type="submit">Rotate key</button>
              </form>
            </section>`
          : ''
      }
      ${
        revocable
          ? html`<section aria-labelledby="revoke-heading" class="panel danger">
              <h2 id="revoke-heading">Revoke access</h2>
              <p>Reads with this authorization are refused from the moment it is revoked. This cannot be undone.</p>
              <p><a class="button danger" href="${detailPath(authorization.clientId)}/revoke">Revoke…</a></p>
            </section>`
          : ''
      }
      <section aria-labelledby="chart-heading">
        <h2 id="chart-heading">Reads over the last 30 days</h2>
        ${readsChart(options.daily)}
      </section>
      <section aria-labelledby="certificates-heading">
        <h2 id="certificates-heading">Certificates fetched</h2>
        ${certificatesTable(options.certificates ?? [])}
      </section>
      <section aria-labelledby="log-heading">
        <h2 id="log-heading">Access log</h2>
        ${accessLogTable(accessLog)}
        <nav class="pages" aria-label="Access log pages">
          ${options.olderThanFirstPage ? html`<a href="${detailPath(authorization.clientId)}#log-heading">Newest entries</a>` : ''}
          ${
            accessLog.nextCursor
              ? html`<a href="${detailPath(authorization.clientId)}?cursor=${accessLog.nextCursor}#log-heading">Older entries</a>`
              : ''
          }
        </nav>
      </section>`,
    viewer,
  );
}

/**
 * Decision 42: the recipient account that holds the grant, by name and id, or that none does. A grant
 * offered to an account that has not accepted it (decision 50) is shown by the id the organization gave:
 * the account's name is its own until it consents.
 */
function portfolioOf(authorization: Authorization): Html {
  if (!authorization.recipientAccountId) return html`<span class="hint">None: a key of its own</span>`;
  if (!authorization.keyClaimed) {
    return html`${authorization.status === 'pending' ? 'Offered to' : 'Was offered to'}
      <span class="id">${authorization.recipientAccountId}</span> <span class="hint">${offerState(authorization)}</span>`;
  }
  return html`${authorization.recipientAccountName ?? 'Unnamed portfolio'} <span class="id">${authorization.recipientAccountId}</span>`;
}

function offerState(authorization: Authorization): string {
  if (authorization.status === 'pending') return 'waiting for the account to accept';
  return authorization.revocationReason === 'declined_by_recipient' ? 'declined' : 'never accepted';
}

const REVOCATION_REASON_LABELS = {
  organization: '',
  released_by_recipient: ' · released by the recipient',
  key_leaked: ' · its key was reported leaked',
  declined_by_recipient: ' · the offer was declined by the recipient',
  access_review: ' · ended by an access review',
  organization_offboarded: ' · the organization was offboarded',
} as const;

function revokedBy(authorization: Authorization): string {
  return authorization.revocationReason ? REVOCATION_REASON_LABELS[authorization.revocationReason] : '';
}

/** Decision 38: whether and when the recipient claimed the key, and from where. */
function keyState(authorization: Authorization): Html {
  if (authorization.recipientAccountId && !authorization.keyClaimed) {
    return html`None of its own: read with the key of the portfolio it is offered to, once that portfolio accepts it`;
  }
  if (authorization.recipientAccountId) return html`None of its own: read with the key of the portfolio that holds it`;
  if (!authorization.keyClaimed) return html`Not yet claimed: the recipient has a one-time link`;
  if (!authorization.claimedAt) return html`Shown once when it was issued`;
  return html`Claimed by the recipient
  ${instant(authorization.claimedAt, '')}${authorization.claimedFromAddress ? html` from ${authorization.claimedFromAddress}` : ''}`;
}

const CERTIFICATE_FORMAT_LABELS = { json: 'Signed JSON', pdf: 'PDF' } as const;

/** Decision 55: each certificate served, when, for which date, in which format, to which address. */
function certificatesTable(certificates: readonly AccessLogEntry[]): Html {
  if (certificates.length === 0) return html`<p class="empty">No certificate fetched yet.</p>`;
  return dataTable({
    caption: `The latest ${certificates.length} certificates fetched, newest first`,
    columns: ['Fetched (UTC)', 'As of', 'Format', 'Client address'],
    rows: certificates.map(
      (entry) =>
        html`<tr>
          <td>${instant(entry.at, '')}</td>
          <td>${entry.certificate ? html`<time datetime="${entry.certificate.asOf}">${entry.certificate.asOf}</time>` : 'Unknown'}</td>
          <td>${entry.certificate ? CERTIFICATE_FORMAT_LABELS[entry.certificate.format] : 'Unknown'}</td>
          <td>${entry.clientAddress ?? 'Unknown'}</td>
        </tr>`,
    ),
  });
}

function accessLogTable(page: AccessLogPage): Html {
  if (page.items.length === 0) return html`<p class="empty">No reads recorded yet.</p>`;
  return dataTable({
    columns: ['Time (UTC)', 'Resource', 'Result', 'Client address', 'Request ID'],
    rows: page.items.map(
      (entry) =>
        html`<tr>
          <td>${instant(entry.at, '')}</td>
          <td><code>${entry.resource}</code></td>
          <td>${entry.status}${entry.code ? html` <code>${entry.code}</code>` : ''}</td>
          <td>${entry.clientAddress ?? 'Unknown'}</td>
          <td><code>${entry.requestId}</code></td>
        </tr>`,
    ),
  });
}

export function confirmRevokePage(viewer: Viewer, authorization: Authorization): Html {
  return layout(
    'Revoke access',
    html`${pageTop(`Revoke access for ${recipientOf(authorization)}?`, [])}
      <p>
        Reads with Client ID <code>${authorization.clientId}</code> are refused from the moment you confirm, with every key it has. This
        cannot be undone: to grant access again, create a new authorization.
      </p>
      <form method="post" action="${detailPath(authorization.clientId)}/revoke" class="actions">
        ${csrfField(viewer)}
        <button type="submit" class="danger">Revoke access</button>
        <a href="${detailPath(authorization.clientId)}">Cancel</a>
      </form>`,
    viewer,
  );
}

export function problemPage(title: string, message: string, viewer?: Viewer): Html {
  return layout(
    title,
    html`<h1>${title}</h1>
      <p class="problem" role="alert">${message}</p>
      <p><a href="/console">Back to the console</a></p>`,
    viewer,
  );
}

export const detailPath = (clientId: string) => `/console/authorizations/${encodeURIComponent(clientId)}`;

const recipientOf = (authorization: Authorization) =>
  authorization.recipientName ?? `Unnamed ${RECIPIENT_TYPE_LABELS[authorization.recipientType].toLowerCase()}`;

function statusBadge(authorization: Authorization): Html {
  return html`<span class="status ${authorization.status}"
    >${authorization.status[0]?.toUpperCase()}${authorization.status.slice(1)}</span
  >`;
}

/** UTC, to the minute: what a person reads; the exact instant is in the element's datetime. */
export function instant(value: string | null, absent: string): Html {
  if (!value) return html`${absent}`;
  return html`<time datetime="${value}">${value.slice(0, 16).replace('T', ' ')} UTC</time>`;
}
