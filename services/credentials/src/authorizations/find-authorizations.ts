import type { Authorization } from '@rsd/contracts';
import { ApiError } from '@rsd/platform';
import { toAuthorization, type StoredAuthorization } from '@rsd/domain';
import type { AuthorizationStore } from '@rsd/ports';
import type { UseCaseDeps } from './use-case-deps';

type ReadDeps = Pick<UseCaseDeps, 'store' | 'clock'>;

/** Newest first, each with its status as of now. */
export async function listAuthorizations(deps: ReadDeps, organizationId: string): Promise<Authorization[]> {
  const records = await deps.store.list(organizationId);
  const now = deps.clock.now();
  return records.map((record) => toAuthorization(record, now));
}

export async function getAuthorization(deps: ReadDeps, organizationId: string, clientId: string): Promise<Authorization> {
  const record = await findOwnAuthorization(deps.store, organizationId, clientId);
  return toAuthorization(record, deps.clock.now());
}

/** Another organization's Client ID answers exactly like an unknown one: nothing about it leaks. */
export async function findOwnAuthorization(
  store: AuthorizationStore,
  organizationId: string,
  clientId: string,
): Promise<StoredAuthorization> {
  const record = await store.find(organizationId, clientId);
  if (!record || record.organizationId !== organizationId) {
    throw new ApiError('AUTHORIZATION_NOT_FOUND', `No authorization ${clientId} in organization ${organizationId}`);
  }
  return record;
}
