import type { WebhookOwner } from '@rsd/contracts';
import type { CredentialView } from '../views/credential-view';

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

/**
 * The grant whose data a queued delivery carries: the one it was queued naming; for a delivery queued
 * before deliveries named it, the one `grantOfDelivery` reads from its owner and body.
 */
export function grantOfQueuedDelivery(delivery: {
  clientId: string;
  body: string;
  grantClientId?: string | undefined;
}): string | undefined {
  return delivery.grantClientId ?? grantOfDelivery(delivery.clientId, delivery.body);
}

const ORGANIZATION_KEY_PREFIX = webhookOwnerKey({ kind: 'organization', organizationId: '' });

/**
 * A grant's address limits hold for every path its data takes: a delivery that carries a grant's data
 * (to the grant's own webhook or to a portfolio's) may reach only a receiver inside that grant's allow
 * list, as the grant is when the delivery is due. Null: no bound, for a delivery that carries no
 * grant's data (an organization's alert, which goes to the organization itself; a portfolio's test)
 * and for a grant without an allow list.
 */
export function deliveryAllowList(ownerKey: string, grant: Pick<CredentialView, 'allowedCidrs'> | undefined): readonly string[] | null {
  if (ownerKey.startsWith(ORGANIZATION_KEY_PREFIX) || grant === undefined) return null;
  return grant.allowedCidrs ?? null;
}

function unknownOwner(owner: never): never {
  throw new Error(`unknown webhook owner: ${JSON.stringify(owner)}`);
}
