import type { WebhookOwner } from '@rsd/contracts';

/**
 * The key a webhook is kept under in the store, from its owner. A grant's is its Client ID, as it
 * always was (the stored data stays as it is); every later owner kind gets a prefix no Client ID has
 * (`account:rcp_…`, `organization:…`), so owners of different kinds can never share a key.
 */
export function webhookOwnerKey(owner: WebhookOwner): string {
  switch (owner.kind) {
    case 'grant':
      return owner.clientId;
    case 'portfolio':
      return `account:${owner.accountId}`;
    case 'organization':
      return `organization:${owner.organizationId}`;
    default:
      return unknownOwner(owner);
  }
}

/**
 * The grant whose data a queued delivery carries: a grant's webhook is keyed by that grant; a
 * portfolio's names the grant in its payload (`data.clientId`), and a test delivery names none.
 */
export function grantOfDelivery(ownerKey: string, body: string): string | undefined {
  if (!ownerKey.includes(':')) return ownerKey;
  const data = (JSON.parse(body) as { data?: { clientId?: unknown } }).data;
  return typeof data?.clientId === 'string' ? data.clientId : undefined;
}

function unknownOwner(owner: never): never {
  throw new Error(`unknown webhook owner: ${JSON.stringify(owner)}`);
}
