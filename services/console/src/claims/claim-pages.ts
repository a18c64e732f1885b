import type { ClaimGrant, ClaimedIntoNewAccount, ClaimedKey, JoinedAccount } from '@rsd/contracts';
import { html, type Html } from '../console/html';
import { secretValue } from '../console/page-parts';
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
      </form>
      <h2>Or add it to my portfolio</h2>
      <p>
        A portfolio holds every grant you receive, from every organization, and reads them all with one account key. Leave the key empty to
        open a new portfolio; its key is shown on the next page, once.
      </p>
      <form method="post" action="${action}" class="actions">
        <input type="hidden" name="_csrf" value="${csrfToken}" />
        <input type="hidden" name="into" value="account" />
        <label for="account-key">Account key of my portfolio (optional)</label>
        <input id="account-key" name="accountKey" type="password" autocomplete="off" spellcheck="false" />
        <label for="account-name">Name of a new portfolio (optional)</label>
        <input id="account-name" name="accountName" type="text" maxlength="200" />
        <button type="submit" class="secondary">Add to my portfolio</button>
      </form>`,
  );
}

/** Decision 42: the grant is in a portfolio; a new portfolio's key is shown here, once. */
export function joinedAccountPage(grant: ClaimGrant, joined: ClaimedIntoNewAccount | JoinedAccount, pending: boolean): Html {
  const accountKey = 'accountKey' in joined ? joined.accountKey : undefined;
  return layout(
    'Added to your portfolio',
    html`<h1>Added to your portfolio</h1>
      ${
        accountKey
          ? html`<div class="warning" role="note">
              <p>
                <strong>This account key is shown once.</strong> It reads every grant your portfolio holds. Copy it now and keep it safe.
              </p>
            </div>`
          : ''
      }
      <dl class="facts">
        <dt>Portfolio</dt>
        <dd><code id="account-id">${joined.accountId}</code></dd>
        <dt>Client ID</dt>
        <dd><code id="client-id">${joined.clientId}</code></dd>
        ${
          accountKey
            ? html`<dt>Account key</dt>
                <dd>${secretValue('account-key', accountKey, 'Copy key')}</dd>`
            : ''
        }
      </dl>
      ${pending ? html`<p class="notice">The grant is recorded and is readable within moments.</p>` : ''} ${facts(grant)}`,
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
        <dd>${secretValue('api-key', claimed.apiKey, 'Copy key')}</dd>
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
