import type { RequestHandler } from 'express';
import { inAnyRange, parseAddressRange, parseClientAddress, type AddressRange } from '@rsd/domain';
import { ApiError } from '@rsd/platform';

export interface EdgePolicyRules {
  /** CIDR ranges or single addresses that are always refused. */
  denyCidrs: readonly string[];
  /** When not empty, only these ranges are served. */
  allowCidrs: readonly string[];
  /** Case-insensitive patterns; a matching User-Agent is refused. */
  blockedUserAgents: readonly string[];
}

/**
 * Step 1 of the order of checks: runs before anything else and answers 403 without a `code`, as the
 * specification shows for the edge. The caller's address is `req.ip`, so it honours the configured
 * number of trusted proxy hops and nothing else a client could forge.
 */
export function edgePolicy(rules: EdgePolicyRules): RequestHandler {
  const deny = rules.denyCidrs.map(rangeOf);
  const allow = rules.allowCidrs.map(rangeOf);
  const blockedAgents = rules.blockedUserAgents.map((pattern) => new RegExp(pattern, 'i'));

  if (!hasEdgeRules(rules)) return (_req, _res, next) => next();

  const isBlocked = (ip: () => string | undefined, userAgent: string): boolean => {
    if (deny.length > 0 || allow.length > 0) {
      const address = parseClientAddress(ip());
      if (deny.length > 0 && (!address || inAnyRange(address, deny))) return true;
      if (allow.length > 0 && (!address || !inAnyRange(address, allow))) return true;
    }
    return blockedAgents.some((pattern) => pattern.test(userAgent));
  };

  return (req, _res, next) => {
    if (!isBlocked(() => req.ip, req.headers['user-agent'] ?? '')) {
      next();
      return;
    }
    next(new ApiError('EDGE_BLOCKED', 'The request was blocked by the edge security policy'));
  };
}

/** No rules, no work: a service without any need not mount the policy (it would run on every request). */
export function hasEdgeRules(rules: EdgePolicyRules): boolean {
  return rules.denyCidrs.length > 0 || rules.allowCidrs.length > 0 || rules.blockedUserAgents.length > 0;
}

function rangeOf(text: string): AddressRange {
  const range = parseAddressRange(text);
  if (!range) throw new Error(`not an IP address or CIDR range: ${text}`);
  return range;
}
