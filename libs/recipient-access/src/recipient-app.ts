import type { Express } from 'express';
import { createBaseApp, type BaseAppOptions } from '@rsd/platform';
import { edgePolicy, hasEdgeRules } from './edge-policy';
import type { RecipientAccessConfig } from './recipient-access-config';

export interface RecipientAppOptions extends Omit<BaseAppOptions, 'trustProxyHops'> {
  config: Pick<RecipientAccessConfig, 'TRUST_PROXY_HOPS' | 'EDGE_DENY_CIDRS' | 'EDGE_ALLOW_CIDRS' | 'EDGE_BLOCKED_USER_AGENTS'>;
}

/**
 * The front half every service that recipients call shares (the read API, the notifier): /healthz,
 * /readyz and /metrics first, so probes never depend on the caller lists; then the edge policy. The
 * service mounts its routes and its documents (mountApiDocs) after it, in the order it is read most.
 */
export function createRecipientApp({ config, ...base }: RecipientAppOptions): Express {
  const app = createBaseApp({ ...base, trustProxyHops: config.TRUST_PROXY_HOPS });
  const rules = {
    denyCidrs: config.EDGE_DENY_CIDRS,
    allowCidrs: config.EDGE_ALLOW_CIDRS,
    blockedUserAgents: config.EDGE_BLOCKED_USER_AGENTS,
  };
  if (hasEdgeRules(rules)) app.use(edgePolicy(rules));
  return app;
}
