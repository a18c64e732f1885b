import { EVENT_TYPES, type AuthorizationEvent } from '@rsd/contracts';
import type { CredentialViews } from '@rsd/ports';

/**
 * Authorization events into the credential views. The views apply an event only when its revision
 * is newer than what they hold, so duplicates and replays change nothing.
 */
export async function projectAuthorizationEvent(credentials: CredentialViews, event: AuthorizationEvent): Promise<void> {
  switch (event.type) {
    case EVENT_TYPES.authorizationCreated: {
      const { clientId, organizationId, keyDigest, scopes, expiresAt, revision } = event.data;
      await credentials.put({ clientId, organizationId, keyDigest, scopes, expiresAt, status: 'active', revision });
      return;
    }
    case EVENT_TYPES.authorizationRevoked:
      await credentials.setStatus(event.data.clientId, 'revoked', event.data.revision);
      return;
    case EVENT_TYPES.authorizationExpired:
      await credentials.setStatus(event.data.clientId, 'expired', event.data.revision);
      return;
  }
}
