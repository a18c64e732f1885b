import type { Alert, Authorization } from '@rsd/contracts';
import { ApiError } from '@rsd/platform';
import { NO_USAGE, organizationAlerts, toAuthorization, type StoredAuthorization } from '@rsd/domain';
import type { AuthorizationStore } from '@rsd/ports';
import type { UseCaseDeps } from './use-case-deps';

type ReadDeps = Pick<UseCaseDeps, 'store' | 'usage' | 'clock'>;

/** Newest first, each with its status and use as of now: one usage query for the whole list. */
export async function listAuthorizations(deps: ReadDeps, organizationId: string): Promise<Authorization[]> {
  return (await listWithAlerts(deps, organizationId)).authorizations;
}

/** The list, and the organization's last alerts (decision 44), from one read of its records. */
export async function listWithAlerts(
  deps: ReadDeps,
  organizationId: string,
): Promise<{ authorizations: Authorization[]; alerts: Alert[] }> {
  const records = await deps.store.list(organizationId);
  const now = deps.clock.now();
  const usage = await deps.usage.usage(
    records.map((record) => record.clientId),
    now,
  );
  return {
    authorizations: records.map((record) => toAuthorization(record, now, usage.get(record.clientId) ?? NO_USAGE)),
    alerts: organizationAlerts(records),
  };
}

export async function getAuthorization(deps: ReadDeps, organizationId: string, clientId: string): Promise<Authorization> {
  const record = await findOwnAuthorization(deps.store, organizationId, clientId);
  return withUsage(deps, record, deps.clock.now());
}

/** One authorization as answered, its use included (decision 20). */
export async function withUsage(deps: Pick<UseCaseDeps, 'usage'>, record: StoredAuthorization, now: Date): Promise<Authorization> {
  const usage = await deps.usage.usage([record.clientId], now);
  return toAuthorization(record, now, usage.get(record.clientId) ?? NO_USAGE);
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
