import {
  authorizationAlertedSchema,
  authorizationCreatedSchema,
  authorizationExpiredSchema,
  authorizationJoinedAccountSchema,
  authorizationKeyClaimedSchema,
  authorizationKeyRotatedSchema,
  authorizationRevokedSchema,
  EVENT_TYPES,
  newEvent,
  type AuthorizationAlerted,
  type AuthorizationCreated,
  type AuthorizationExpired,
  type AuthorizationJoinedAccount,
  type AuthorizationKeyClaimed,
  type RevocationReason,
  type AuthorizationKeyRotated,
  type AuthorizationRevoked,
  type DomainEvent,
} from '@rsd/contracts';
import type { StoredAlert } from '../alerts/alert-state';
import type { StoredAuthorization } from './authorization-record';

export const EVENT_SOURCE = '/credentials';

/** The envelope fields that vary per event: a unique id and the time of the change. */
export interface EventStamp {
  id: string;
  time: Date;
}

/** The grant an event is about: every authorization event names it and its organization. */
export function grantIds(
  record: Pick<StoredAuthorization, 'clientId' | 'organizationId'>,
): Pick<StoredAuthorization, 'clientId' | 'organizationId'> {
  return { clientId: record.clientId, organizationId: record.organizationId };
}

/** What a grant gives, as the events that make it readable carry it: to whom, which scopes, until when, from where. */
function grantTerms(record: StoredAuthorization) {
  return {
    recipientType: record.recipientType,
    scopes: record.scopes,
    expiresAt: record.expiresAt,
    allowedCidrs: record.allowedCidrs ?? null,
  };
}

/** An event of the credentials service: `stamp`'s id and time, this service as its source, checked against its schema. */
export function checkedEvent<E extends DomainEvent>(
  schema: { parse(value: unknown): E },
  stamp: EventStamp,
  type: E['type'],
  data: E['data'],
): E {
  return schema.parse(newEvent<E>({ ...stamp, source: EVENT_SOURCE, type, data }));
}

/** Carries the key's digest, never the key: the raw key leaves the service only in the create response. */
export function authorizationCreated(record: StoredAuthorization, stamp: EventStamp): AuthorizationCreated {
  return checkedEvent(authorizationCreatedSchema, stamp, EVENT_TYPES.authorizationCreated, {
    ...grantIds(record),
    ...grantTerms(record),
    recipientName: record.recipientName,
    keyDigest: record.keyDigest,
    createdAt: record.createdAt,
    revision: record.revision,
    recipientAccountId: record.recipientAccountId ?? null,
  });
}

/** Decision 42: what the account's portfolio lists of the grant travels with the join; no key, link or address. */
export function authorizationJoinedAccount(
  record: StoredAuthorization & { recipientAccountId: string },
  stamp: EventStamp,
): AuthorizationJoinedAccount {
  return checkedEvent(authorizationJoinedAccountSchema, stamp, EVENT_TYPES.authorizationJoinedAccount, {
    ...grantIds(record),
    ...grantTerms(record),
    recipientAccountId: record.recipientAccountId,
    joinedAt: stamp.time.toISOString(),
    revision: record.revision,
  });
}

/** Digests only: the new key leaves the service in the rotate response alone. */
export function authorizationKeyRotated(record: StoredAuthorization & { keyDigest: string }, stamp: EventStamp): AuthorizationKeyRotated {
  return checkedEvent(authorizationKeyRotatedSchema, stamp, EVENT_TYPES.authorizationKeyRotated, {
    ...grantIds(record),
    keyDigest: record.keyDigest,
    previousKeyDigest: record.previousKeyDigest ?? null,
    previousKeyExpiresAt: record.previousKeyExpiresAt ?? null,
    rotatedAt: stamp.time.toISOString(),
    revision: record.revision,
  });
}

/** Decision 38: the claimed key's digest, as for rotation; neither the link, its digest nor the claimant's address travels. */
export function authorizationKeyClaimed(record: StoredAuthorization & { keyDigest: string }, stamp: EventStamp): AuthorizationKeyClaimed {
  return checkedEvent(authorizationKeyClaimedSchema, stamp, EVENT_TYPES.authorizationKeyClaimed, {
    ...grantIds(record),
    keyDigest: record.keyDigest,
    claimedAt: stamp.time.toISOString(),
    revision: record.revision,
  });
}

/** The change happened at the stamp's time, so that is when it was revoked. */
export function authorizationRevoked(
  record: StoredAuthorization & { revocationReason: RevocationReason },
  stamp: EventStamp,
): AuthorizationRevoked {
  return checkedEvent(authorizationRevokedSchema, stamp, EVENT_TYPES.authorizationRevoked, {
    ...grantIds(record),
    revokedAt: stamp.time.toISOString(),
    revision: record.revision,
    revocationReason: record.revocationReason,
  });
}

/** Marked expired at the stamp's time: the moment the service observed the expiry. */
export function authorizationExpired(record: StoredAuthorization, stamp: EventStamp): AuthorizationExpired {
  return checkedEvent(authorizationExpiredSchema, stamp, EVENT_TYPES.authorizationExpired, {
    ...grantIds(record),
    expiredAt: stamp.time.toISOString(),
    revision: record.revision,
  });
}

/** Decision 44: an alert of the grant, with the record's revision; an address at most, never a key. */
export function authorizationAlerted(record: StoredAuthorization, alert: StoredAlert, stamp: EventStamp): AuthorizationAlerted {
  const { id, type, ...details } = alert;
  return checkedEvent(authorizationAlertedSchema, stamp, EVENT_TYPES.authorizationAlerted, {
    ...grantIds(record),
    alertId: id,
    alert: type,
    ...details,
    revision: record.revision,
  });
}
