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
    default:
      return unknownOwner(owner.kind);
  }
}

function unknownOwner(kind: never): never {
  throw new Error(`unknown webhook owner kind: ${String(kind)}`);
}
