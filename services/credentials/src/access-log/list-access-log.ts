import type { AccessLogPage } from '@rsd/contracts';
import type { AccessLogStore, AuthorizationStore } from '@rsd/ports';
import { findOwnAuthorization } from '../authorizations/find-authorizations';
import { cursorAfter, type AccessLogQuery } from './access-log-query';

export interface AccessLogDeps {
  store: AuthorizationStore;
  accessLog: Pick<AccessLogStore, 'page'>;
}

/**
 * Decision 21: who read through this authorization, newest first. The authorization must be the
 * organization's own (404 otherwise, as for GET of it); one entry more than the page says whether
 * another page follows.
 */
export async function listAccessLog(
  deps: AccessLogDeps,
  organizationId: string,
  clientId: string,
  query: AccessLogQuery,
): Promise<AccessLogPage> {
  await findOwnAuthorization(deps.store, organizationId, clientId);
  const found = await deps.accessLog.page(clientId, { limit: query.limit + 1, ...(query.after ? { after: query.after } : {}) });
  const page = found.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: page.map(({ at, resource, status, code, clientAddress, requestId }) => ({
      at,
      resource,
      status,
      code,
      clientAddress,
      requestId,
    })),
    nextCursor: found.length > query.limit && last ? cursorAfter(last) : null,
  };
}
