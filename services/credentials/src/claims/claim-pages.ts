import type { ClaimGrant, ClaimedKey } from '@rsd/contracts';
import { html, type Html } from '../console/html';
import { layout, RECIPIENT_TYPE_LABELS, SCOPE_LABELS } from '../console/pages';

// Decision 38's pages for a recipient: what the link grants, the key once, or why the link no longer works.

export function claimPage(grant: ClaimGrant, action: string, csrfToken: string): Html {
  return layout(
    'Claim your API key',
    html`<h1>Claim your API key</h1>
      <p><strong>${grant.organizationId}</strong> grants ${grant.recipientName ?? 'you'} read access to its resilience score.</p>
      ${facts(grant)}
      <div class="warning" role="note">
        <p>
          <strong>This link works once.</strong> Claiming creates the key and shows it on the next page, once. Have a safe place ready to
          keep it.
        </p>
      </div>
      <form method="post" action="${action}" class="actions">
        <input type="hidden" name="_csrf" value="${csrfToken}" />
        <button type="submit">Claim the key</button>
      </form>`,
  );
}

export function claimedKeyPage(grant: ClaimGrant, claimed: ClaimedKey, pending: boolean): Html {
  return layout(
    'Your API key',
    html`<h1>Your API key</h1>
      <div class="warning" role="note">
        <p><strong>This key is shown once.</strong> Copy it now and keep it safe. It cannot be shown again, to you or to anyone.</p>
      </div>
      <dl class="facts">
        <dt>Client ID</dt>
        <dd><code id="client-id">${claimed.clientId}</code></dd>
        <dt>API key</dt>
        <dd>
          <code id="api-key" class="secret">${claimed.apiKey}</code>
          <button type="button" class="secondary" data-copy="api-key" hidden>Copy key</button>
          <span class="copied" role="status" aria-live="polite"></span>
        </dd>
      </dl>
      ${pending ? html`<p class="notice">The key is recorded and starts working within moments.</p>` : ''} ${facts(grant)}`,
  );
}

export function claimProblemPage(title: string, message: string): Html {
  return layout(
    title,
    html`<h1>${title}</h1>
      <p class="problem" role="alert">${message}</p>`,
  );
}

function facts(grant: ClaimGrant): Html {
  return html`<dl class="facts">
    <dt>Organization</dt>
    <dd>${grant.organizationId}</dd>
    <dt>Recipient</dt>
    <dd>${grant.recipientName ?? 'Not named'} (${RECIPIENT_TYPE_LABELS[grant.recipientType]})</dd>
    <dt>Data granted</dt>
    <dd>${grant.scopes.map((scope) => SCOPE_LABELS[scope]).join(', ')}</dd>
    <dt>Access ends</dt>
    <dd>${grant.expiresAt ? html`<time datetime="${grant.expiresAt}">${utc(grant.expiresAt)}</time>` : 'No end date'}</dd>
    <dt>Link works until</dt>
    <dd><time datetime="${grant.claimExpiresAt}">${utc(grant.claimExpiresAt)}</time></dd>
  </dl>`;
}

const utc = (instant: string) => `${instant.slice(0, 16).replace('T', ' ')} UTC`;
