import type { Express } from 'express';
import { createBaseApp, mountApiDocs, type BaseAppOptions } from '@rsd/platform';
import { edgePolicy } from './edge-policy';
import type { RecipientAccessConfig } from './recipient-access-config';

export interface RecipientAppOptions extends Omit<BaseAppOptions, 'trustProxyHops'> {
  config: Pick<RecipientAccessConfig, 'TRUST_PROXY_HOPS' | 'EDGE_DENY_CIDRS' | 'EDGE_ALLOW_CIDRS' | 'EDGE_BLOCKED_USER_AGENTS'>;
  /** The service's OpenAPI document, served at /v1/openapi.json and /docs behind the edge policy. */
  openApi: object;
}

/**
 * The front half every service that recipients call shares (the read API, the notifier): /healthz,
 * /readyz and /metrics first, so probes never depend on the caller lists; then the edge policy; then
 * the API's documents. The service mounts its routes after it.
 */
export function createRecipientApp({ config, openApi, ...base }: RecipientAppOptions): Express {
  const app = createBaseApp({ ...base, trustProxyHops: config.TRUST_PROXY_HOPS });
  app.use(
    edgePolicy({
      denyCidrs: config.EDGE_DENY_CIDRS,
      allowCidrs: config.EDGE_ALLOW_CIDRS,
      blockedUserAgents: config.EDGE_BLOCKED_USER_AGENTS,
    }),
  );
  mountApiDocs(app, openApi);
  return app;
}
