import { EVENT_TYPES, type AuthorizationStatus, type RecipientType, type Scope } from '@rsd/contracts';
import { hasExpired } from '../expiry';
import { revisionVersion, viewEvents, type ViewDefinition } from './view';

/** What the read API knows of a credential, projected from authorization events. */
export interface CredentialView {
  clientId: string;
  organizationId: string;
  /** Null until a key delivered by claim link is claimed (decision 38): then no key verifies. */
  keyDigest: string | null;
  /** Decision 19: the key before the last rotation, valid until `previousKeyExpiresAt`; absent in views from before rotation existed. */
  previousKeyDigest?: string | null;
  previousKeyExpiresAt?: string | null;
  /** Decision 22: the client addresses reads are allowed from; null or absent: any. */
  allowedCidrs?: string[] | null;
  scopes: Scope[];
  status: AuthorizationStatus;
  expiresAt: string | null;
  /** Decision 42: the recipient account whose key reads this grant (it has none of its own); absent or null: none. */
  recipientAccountId?: string | null;
  /**
   * Decision 55: who the grant was given to, as its Created event says, and that event's id: what a
   * certificate names. Absent in views built before certificates, until `rebuild-views`.
   */
  recipientType?: RecipientType;
  recipientName?: string | null;
  createdEventId?: string;
  revision: number;
  /** Decision 56: the recipient's own data was erased (its name is null for good); absent otherwise. */
  recipientErased?: true;
}

/** Active now: neither revoked nor marked expired, and its expiry (if any) not yet reached, whether or not the Expired event has arrived. */
export function isActive(view: CredentialView, now: Date): boolean {
  return view.status === 'active' && !hasExpired(view.expiresAt, now);
}

/**
 * One document per Client ID. Every authorization event carries the authorization's revision, and
 * an event applies only if it is newer than the document: duplicates and replays change nothing.
 */
export const credentialView: ViewDefinition<CredentialView> = {
  name: 'credential_views',

  ...viewEvents<CredentialView>()({
    // An account's own erasure names no grant.
    keyOf: (event) => ('clientId' in event.data ? event.data.clientId : undefined),
    on: {
      [EVENT_TYPES.authorizationCreated]: (state, event) => {
        if (state && state.revision >= event.data.revision) return state;
        const { clientId, organizationId, keyDigest, scopes, expiresAt, revision } = event.data;
        const allowedCidrs = event.data.allowedCidrs ? [...event.data.allowedCidrs] : null;
        return {
          clientId,
          organizationId,
          keyDigest,
          previousKeyDigest: null,
          previousKeyExpiresAt: null,
          allowedCidrs,
          scopes: [...scopes],
          status: 'active',
          expiresAt,
          recipientAccountId: event.data.recipientAccountId ?? null,
          recipientType: event.data.recipientType,
          recipientName: event.data.recipientName,
          createdEventId: event.id,
          revision,
        };
      },
      [EVENT_TYPES.authorizationJoinedAccount]: (state, event) => {
        // No key of its own from now on: the account's key reads it.
        if (!state || state.revision >= event.data.revision) return state;
        return { ...state, keyDigest: null, recipientAccountId: event.data.recipientAccountId, revision: event.data.revision };
      },
      // Like a status change, a rotation of a credential this view has never seen has nothing to apply to.
      [EVENT_TYPES.authorizationKeyRotated]: withRotatedKey,
      [EVENT_TYPES.authorizationKeyClaimed]: (state, event) => {
        if (!state || state.revision >= event.data.revision) return state;
        return { ...state, keyDigest: event.data.keyDigest, revision: event.data.revision };
      },
      [EVENT_TYPES.authorizationPreviousKeyRevoked]: (state, event) => {
        // Decision 43: the previous key of the overlap was reported leaked; the current key keeps working.
        if (!state || state.revision >= event.data.revision) return state;
        const ended = state.previousKeyDigest === event.data.previousKeyDigest;
        return { ...state, ...(ended ? { previousKeyDigest: null, previousKeyExpiresAt: null } : {}), revision: event.data.revision };
      },
      [EVENT_TYPES.authorizationRevoked]: (state, event) => withStatus(state, 'revoked', event.data.revision),
      [EVENT_TYPES.authorizationExpired]: (state, event) => withStatus(state, 'expired', event.data.revision),
      // Decision 56: the name goes; every later event keeps the mark (they spread the state), so it never comes back.
      [EVENT_TYPES.recipientErased]: (state) =>
        state && !state.recipientErased ? { ...state, recipientName: null, recipientErased: true } : state,
    },
  }),

  versionOf: erasableVersion,
};

/**
 * Revisions order a document's states; an erasure (decision 56) carries no revision of its own, so
 * the erased state of a revision sorts just after that revision's (`…0003` < `…0003.erased` < `…0004`).
 */
export function erasableVersion(state: { revision: number; recipientErased?: true }): string {
  return state.recipientErased ? `${revisionVersion(state.revision)}.erased` : revisionVersion(state.revision);
}

/**
 * A key rotation (a grant's, decision 5; an account's, decision 42): the new key's digest, and the
 * previous one's for the overlap. A record this view has never seen has nothing to apply it to.
 */
export function withRotatedKey<S extends { revision: number }>(
  state: S | undefined,
  event: { data: { keyDigest: string; previousKeyDigest: string | null; previousKeyExpiresAt: string | null; revision: number } },
): S | undefined {
  if (!state || state.revision >= event.data.revision) return state;
  const { keyDigest, previousKeyDigest, previousKeyExpiresAt, revision } = event.data;
  return { ...state, keyDigest, previousKeyDigest, previousKeyExpiresAt, revision };
}

/** A status change for a credential this view has never seen is ignored: there is nothing to serve. */
function withStatus(state: CredentialView | undefined, status: AuthorizationStatus, revision: number): CredentialView | undefined {
  if (!state || state.revision >= revision) return state;
  return { ...state, status, revision };
}
