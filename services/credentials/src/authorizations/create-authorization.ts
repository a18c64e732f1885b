import type { CreatedAuthorization } from '@rsd/contracts';
import { authorizationCreated, digestApiKey, NO_USAGE, toAuthorization, type StoredAuthorization } from '@rsd/domain';
import { outboxEntryOf } from '../outbox/outbox-entry';
import { publishOwedEvents } from '../outbox/outbox-relay';
import { validateCreateRequest, type ValidCreateRequest } from './create-authorization-request';
import type { CredentialGenerator, UseCaseDeps } from './use-case-deps';

/** The one place the raw API key exists: it is digested at once and returned once. */
export async function createAuthorization(
  deps: UseCaseDeps,
  generate: CredentialGenerator,
  organizationId: string,
  body: unknown,
): Promise<CreatedAuthorization> {
  const now = deps.clock.now();
  const request = validateCreateRequest(body, now);
  const clientId = generate.clientId();
  const apiKey = generate.apiKey();
  const record = newAuthorization({ organizationId, clientId, keyDigest: digestApiKey(apiKey), request, now });
  const created = authorizationCreated(record, { id: deps.newEventId(), time: now });
  await deps.store.create(record, [outboxEntryOf(created)]);
  // A 201 either way: the key works from the moment its Created event reaches the read API, owed or not.
  await publishOwedEvents(deps.relay, deps.log, deps.publishDeadlineMs);
  // A new Client ID: no read can have been made with it yet.
  return { ...toAuthorization(record, now, NO_USAGE), apiKey };
}

function newAuthorization(fields: {
  organizationId: string;
  clientId: string;
  keyDigest: string;
  request: ValidCreateRequest;
  now: Date;
}): StoredAuthorization {
  const { organizationId, clientId, keyDigest, request, now } = fields;
  return {
    clientId,
    organizationId,
    recipientType: request.recipientType,
    recipientName: request.recipientName,
    scopes: request.scopes,
    keyDigest,
    previousKeyDigest: null,
    previousKeyExpiresAt: null,
    expiresAt: request.expiresAt,
    allowedCidrs: request.allowedCidrs,
    createdAt: now.toISOString(),
    revokedAt: null,
    expiredAt: null,
    revision: 1,
  };
}
