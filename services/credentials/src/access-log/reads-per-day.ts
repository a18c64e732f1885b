import { dailyWindowStart, everyDay, type DailyReads } from '@rsd/domain';
import type { AccessLogStore, AuthorizationStore, Clock } from '@rsd/ports';
import { findOwnAuthorization } from '../authorizations/find-authorizations';

export const CHART_DAYS = 30;

export interface ReadsPerDayDeps {
  store: AuthorizationStore;
  accessLog: Pick<AccessLogStore, 'dailyReads'>;
  clock: Clock;
}

/** Decision 38's chart: the organization's own authorization's reads and refusals on each of the last 30 UTC days, today included. */
export async function readsPerDay(deps: ReadsPerDayDeps, organizationId: string, clientId: string): Promise<DailyReads[]> {
  await findOwnAuthorization(deps.store, organizationId, clientId);
  const now = deps.clock.now();
  const counted = await deps.accessLog.dailyReads(clientId, dailyWindowStart(now, CHART_DAYS), new Date(now.getTime() + 1));
  return everyDay(counted, now, CHART_DAYS);
}
