import type { OrganizationAlertEvent, Webhook, WebhookDelivery, WebhookDisabledReason } from '@resilience-score/client';
import { ALERT_TYPES } from '@rsd/contracts';
import { html, type Html } from './html';
import { choices, dataTable, formProblems, noticeAmong, pageTop, secretValue, type FormProblems } from './page-parts';
import { ALERT_LABELS, csrfField, instant, layout, type Viewer } from './pages';

// The organization's alert webhooks in the console (decisions 44-45): the notifier's lifecycle, in pages.

export const ALERT_WEBHOOKS_PATH = '/console/alert-webhooks';
export const alertWebhookPath = (id: string) => `${ALERT_WEBHOOKS_PATH}/${encodeURIComponent(id)}`;

/** Decision 45: 0 to 86,400 seconds during which deliveries carry the old secret's signature too. */
export const SECRET_OVERLAP_CHOICES = [
  { seconds: 0, label: 'No overlap: only the new secret signs from now on' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
] as const;

/** What the person typed in the create or edit form, kept as typed when it is refused. */
export interface WebhookForm {
  url: string;
  events: string[];
}

export const EMPTY_WEBHOOK_FORM: WebhookForm = { url: '', events: [...ALERT_TYPES] };

/** What the notifier refused, as the form shows it: by field where it names one. */
export type WebhookProblems = FormProblems<keyof WebhookForm>;

/** The notices a redirect may name (`?notice=`): fixed words, never text from the query. */
export const WEBHOOK_NOTICES = {
  created: 'Webhook created.',
  updated: 'Webhook saved.',
  paused: 'Paused. Alerts are not sent to it until it is enabled again.',
  enabled: 'Enabled. The next alerts are sent to it.',
  tested: 'A test delivery (webhook.test) is on its way.',
  redelivered: 'The delivery is sent again, with its original payload and webhook-id.',
  deleted: 'Webhook deleted.',
} as const;
export type WebhookNotice = keyof typeof WEBHOOK_NOTICES;

export const noticeOf = (value: unknown) => noticeAmong(WEBHOOK_NOTICES, value);

/** Where the console reaches no notifier: what it would show, and where they are managed instead. */
export function alertWebhooksUnavailablePage(viewer: Viewer): Html {
  return layout(
    'Alert webhooks',
    html`${pageTop('Alert webhooks', [])}
      <p class="notice" role="status">
        This console is not connected to the notifier, which sends the alerts. Manage alert webhooks with the notifier's API
        (<code>/v1/organizations/${viewer.organizationId}/webhooks</code>) or <code>rsd alert-webhooks</code>; an operator connects the
        console by setting <code>NOTIFIER_URL</code> on the console and <code>CONSOLE_JWKS_URL</code> on the notifier.
      </p>`,
    viewer,
  );
}

export function alertWebhooksPage(
  viewer: Viewer,
  webhooks: readonly Webhook<OrganizationAlertEvent>[],
  options: { notice?: string | undefined; form?: WebhookForm; problems?: WebhookProblems } = {},
): Html {
  const list =
    webhooks.length === 0
      ? html`<p class="empty">No alert webhooks yet. Add one to hear of first uses, new addresses, failures, expiries and leaks.</p>`
      : dataTable({
          caption: `Alert webhooks of ${viewer.organizationId}, oldest first`,
          columns: ['Address', 'Alerts', 'Status', 'Created'],
          rows: webhooks.map(
            (webhook) =>
              html`<tr>
                <th scope="row">
                  <a href="${alertWebhookPath(webhook.id)}">${webhook.url}</a>
                  <span class="id">${webhook.id}</span>
                </th>
                <td>${eventsOf(webhook.events)}</td>
                <td>${statusBadge(webhook)}</td>
                <td>${instant(webhook.createdAt, '')}</td>
              </tr>`,
          ),
        });
  return layout(
    'Alert webhooks',
    html`${pageTop('Alert webhooks', [], options)}
      <p>Each alert about your authorizations is sent to these addresses, signed as Standard Webhooks describes.</p>
      ${list}
      <section aria-labelledby="new-webhook-heading" class="panel">
        <h2 id="new-webhook-heading">Add a webhook</h2>
        ${webhookForm(viewer, {
          action: ALERT_WEBHOOKS_PATH,
          form: options.form ?? EMPTY_WEBHOOK_FORM,
          problems: options.problems ?? {},
          submit: 'Add webhook',
          refused: 'The webhook was not created.',
        })}
      </section>`,
    viewer,
  );
}

/** One webhook: its facts, the edit form, its actions and its deliveries, each redeliverable. */
export function alertWebhookPage(
  viewer: Viewer,
  webhook: Webhook<OrganizationAlertEvent>,
  deliveries: readonly WebhookDelivery<OrganizationAlertEvent>[],
  options: { notice?: string | undefined; form?: WebhookForm; problems?: WebhookProblems } = {},
): Html {
  const path = alertWebhookPath(webhook.id);
  const running = webhook.status === 'active';
  return layout(
    'Alert webhook',
    html`${pageTop('Alert webhook', [{ href: ALERT_WEBHOOKS_PATH, label: 'Alert webhooks' }], options)}
      <dl class="facts">
        <dt>Address</dt>
        <dd><code>${webhook.url}</code></dd>
        <dt>Webhook ID</dt>
        <dd><code>${webhook.id}</code></dd>
        <dt>Alerts</dt>
        <dd>${eventsOf(webhook.events)}</dd>
        <dt>Status</dt>
        <dd>${statusBadge(webhook)}</dd>
        <dt>Created</dt>
        <dd>${instant(webhook.createdAt, '')}</dd>
      </dl>
      ${webhook.status === 'disabled' ? html`<p class="problem" role="alert">${DISABLED_BECAUSE[disabledReasonOf(webhook)]}</p>` : ''}
      <div class="actions">
        <form method="post" action="${path}/enabled">
          ${csrfField(viewer)}
          <input type="hidden" name="enabled" value="${running ? 'false' : 'true'}" />
          <button type="submit" class="secondary">${running ? 'Pause' : 'Enable'}</button>
        </form>
        <form method="post" action="${path}/test">
          ${csrfField(viewer)}
          <button type="submit" class="secondary">Send a test delivery</button>
        </form>
      </div>
      <section aria-labelledby="edit-heading" class="panel">
        <h2 id="edit-heading">Change it</h2>
        ${webhookForm(viewer, {
          action: path,
          form: options.form ?? { url: webhook.url, events: [...webhook.events] },
          problems: options.problems ?? {},
          submit: 'Save',
          refused: 'The webhook was not changed.',
        })}
      </section>
      <section aria-labelledby="rotate-secret-heading" class="panel">
        <h2 id="rotate-secret-heading">Rotate the signing secret</h2>
        <p>A new secret, shown once. During the overlap each delivery carries both signatures, so the receiver can switch without a gap.</p>
        <form method="post" action="${path}/rotate-secret" class="inline">
          ${csrfField(viewer)}
          <label for="overlapSeconds">Old secret keeps signing for</label>
          <select id="overlapSeconds" name="overlapSeconds">
            ${choices(SECRET_OVERLAP_CHOICES, 86_400)}
          </select>
          <button type="submit">Rotate secret</button>
        </form>
      </section>
      <section aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Deliveries</h2>
        ${deliveriesTable(viewer, path, deliveries)}
      </section>
      <section aria-labelledby="delete-heading" class="panel danger">
        <h2 id="delete-heading">Delete the webhook</h2>
        <p>No alert is sent to this address any more. This cannot be undone.</p>
        <form method="post" action="${path}/delete">
          ${csrfField(viewer)}
          <button type="submit" class="danger">Delete webhook</button>
        </form>
      </section>`,
    viewer,
  );
}

/** The secret, shown once: after a create or a rotation. */
export function webhookSecretPage(
  viewer: Viewer,
  webhook: { id: string; url: string },
  secret: string,
  kind: 'created' | 'rotated',
  overlapSeconds?: number,
): Html {
  const title = kind === 'created' ? 'Webhook created' : 'New signing secret';
  return layout(
    title,
    html`<h1>${title}</h1>
      <div class="warning" role="note">
        <p>
          <strong>This secret is shown once.</strong> Give it to the receiver at <code>${webhook.url}</code> to verify the
          <code>webhook-signature</code> header. It cannot be shown again; if it is lost, rotate it.
        </p>
      </div>
      <dl class="facts">
        <dt>Webhook ID</dt>
        <dd><code>${webhook.id}</code></dd>
        <dt>Signing secret</dt>
        <dd>${secretValue('webhook-secret', secret, 'Copy secret')}</dd>
      </dl>
      ${
        kind === 'rotated'
          ? html`<p>
              ${overlapSeconds ? `The previous secret signs deliveries too for ${overlapLabel(overlapSeconds)}.` : 'The previous secret no longer signs.'}
            </p>`
          : ''
      }
      <p><a href="${alertWebhookPath(webhook.id)}">View the webhook</a> · <a href="${ALERT_WEBHOOKS_PATH}">All alert webhooks</a></p>`,
    viewer,
  );
}

function webhookForm(
  viewer: Viewer,
  options: { action: string; form: WebhookForm; problems: WebhookProblems; submit: string; refused: string },
): Html {
  const { form } = options;
  const fields = formProblems(options.problems, { form: 'Request', url: 'Address', events: 'Alerts' });
  const { described, under: fieldProblem } = fields;
  return html`${fields.summary(options.refused)}
    <form method="post" action="${options.action}" class="stack" novalidate>
      ${csrfField(viewer)}
      <label for="url">Address <span class="hint">(https)</span></label>
      <input id="url" name="url" type="url" maxlength="2048" value="${form.url}" ${described('url')} />
      ${fieldProblem('url')}
      <fieldset id="events" ${described('events')}>
        <legend>Alerts to send</legend>
        ${ALERT_TYPES.map(
          (type) =>
            html`<label class="check"
              ><input type="checkbox" name="events" value="${type}" ${form.events.includes(type) ? html` checked` : html``} />
              ${ALERT_LABELS[type]} <code>${type}</code></label
            >`,
        )}
      </fieldset>
      ${fieldProblem('events')}
      <div class="actions"><button type="submit">${options.submit}</button></div>
    </form>`;
}

function deliveriesTable(viewer: Viewer, path: string, deliveries: readonly WebhookDelivery<OrganizationAlertEvent>[]): Html {
  if (deliveries.length === 0) return html`<p class="empty">No deliveries yet. Send a test delivery to try the receiver.</p>`;
  return dataTable({
    caption: "The webhook's latest delivery attempts, newest first",
    columns: ['Scheduled', 'Event', 'Attempt', 'Outcome', 'Message'],
    rows: deliveries.map(
      (delivery) =>
        html`<tr>
          <td>${instant(delivery.scheduledAt, '')}</td>
          <td><code>${delivery.eventType}</code></td>
          <td>${delivery.attempt}</td>
          <td>${outcomeOf(delivery)}</td>
          <td>
            <span class="id">${delivery.messageId}</span>
            <form method="post" action="${path}/deliveries/${encodeURIComponent(delivery.messageId)}/redeliver">
              ${csrfField(viewer)}
              <button type="submit" class="secondary">Redeliver</button>
            </form>
          </td>
        </tr>`,
    ),
  });
}

const FAILURE_LABELS = {
  response_status: 'the receiver answered with an error',
  timeout: 'no answer in time',
  connection_failed: 'no connection',
  target_not_allowed: 'the address is not allowed',
} as const;

function outcomeOf(delivery: WebhookDelivery<OrganizationAlertEvent>): string {
  const status = delivery.responseCode === null ? '' : ` (HTTP ${delivery.responseCode})`;
  if (delivery.status === 'succeeded') return `Delivered${status}`;
  if (delivery.status === 'pending') return 'Pending';
  // An alert carries no grant's data, so none is ever skipped; were one, it would not read as a failure.
  if (delivery.status === 'skipped') return 'Skipped: the address is outside the grant’s allow list';
  return `Failed: ${delivery.failure ? FAILURE_LABELS[delivery.failure] : 'unknown'}${status}`;
}

function eventsOf(events: readonly OrganizationAlertEvent[]): string {
  return events.length === ALERT_TYPES.length ? 'All alerts' : events.map((type) => ALERT_LABELS[type]).join(', ');
}

/** Why the notifier disabled a webhook, and what brings it back. */
const DISABLED_BECAUSE: Record<WebhookDisabledReason, string> = {
  delivery_failures: 'Disabled after a day of failed deliveries. Mend the receiver, then enable it: deliveries resume from then.',
  key_ended: 'Disabled: the key that set its address was cut off by a rotation with no overlap. Set its address again to enable it.',
  key_leaked: 'Disabled: a key of its owner was reported leaked. Set its address again to enable it.',
};
const DISABLED_SHORT: Record<WebhookDisabledReason, string> = {
  delivery_failures: 'Disabled: deliveries failed',
  key_ended: 'Disabled: its key ended',
  key_leaked: 'Disabled: its key leaked',
};

/** A notifier older than the reasons disabled a webhook only after failed deliveries. */
function disabledReasonOf(webhook: Webhook<OrganizationAlertEvent>): WebhookDisabledReason {
  return webhook.disabledReason ?? 'delivery_failures';
}

function statusBadge(webhook: Webhook<OrganizationAlertEvent>): Html {
  const label =
    webhook.status === 'disabled' ? DISABLED_SHORT[disabledReasonOf(webhook)] : { active: 'Active', paused: 'Paused' }[webhook.status];
  return html`<span class="status ${webhook.status}">${label}</span>`;
}

function overlapLabel(seconds: number): string {
  return SECRET_OVERLAP_CHOICES.find((choice) => choice.seconds === seconds)?.label ?? `${seconds} seconds`;
}
