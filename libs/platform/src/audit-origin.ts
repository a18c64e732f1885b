import type { Request, Response } from 'express';
import type { ActorVia, AuditActor } from '@rsd/contracts';
import type { Origin } from '@rsd/domain';
import { requestIdOf } from './access-log';
import { callerOf, type CallerClaims } from './caller-auth';

/*
 * Decision 54: who asks for a change, as every service that records one derives it (the credentials
 * service for grants and accounts, the notifier for webhooks and alert subscriptions).
 */

/**
 * Decision 54's `via` from what the client says of itself: the console's own token, else the
 * User-Agent the CLI (`rsd-cli/`) and the SDKs (`rsd-sdk-ts/`, `rsd-sdk-python/`, and the SDKs' earlier
 * `resilience-score-typescript/` and `resilience-score-python/`) send, else the API itself. A claim a
 * client makes of itself: it says how, never who.
 */
export function viaOf(req: Request, caller?: Pick<CallerClaims, 'via'>): ActorVia {
  if (caller?.via === 'console') return 'console';
  const agent = req.get('user-agent') ?? '';
  if (agent.startsWith('rsd-cli/')) return 'cli';
  if (SDK_AGENTS.some((prefix) => agent.startsWith(prefix))) return 'sdk';
  return 'api';
}

const SDK_AGENTS = ['rsd-sdk-ts/', 'rsd-sdk-python/', 'resilience-score-typescript/', 'resilience-score-python/'];

/** The request's id and the caller's address as the service determines them (its trusted proxy hops included). */
function requestOf(req: Request, res: Response): Pick<Origin, 'requestId' | 'address'> {
  return { requestId: requestIdOf(res) ?? null, address: req.ip ?? null };
}

/**
 * A token's holder: `<issuer>|<subject>` (the issuer empty where tokens carry none), a person unless
 * the token is a client's own (client credentials). Never the token itself. The caller is the one
 * `requireCaller` verified, or the claims a handler verified itself (`checkBearer`).
 */
export function tokenOrigin(req: Request, res: Response, caller: CallerClaims = callerOf(res)): Origin {
  const actor: AuditActor = {
    type: caller.service ? 'service' : 'person',
    id: `${caller.issuer ?? ''}|${caller.subject ?? ''}`.slice(0, 512),
    via: viaOf(req, caller),
  };
  return { actor, ...requestOf(req, res) };
}

/** A recipient by the key it holds: the account's id or the grant's Client ID, never the key. */
export function recipientOrigin(req: Request, res: Response, id: string): Origin {
  return { actor: { type: 'recipient', id, via: viaOf(req) }, ...requestOf(req, res) };
}

/** A leak report: the secret-scanning service reports keys it found, whoever relays the report. */
export function reporterOrigin(req: Request, res: Response): Origin {
  return { actor: { type: 'reporter', id: 'secret-scanning', via: viaOf(req) }, ...requestOf(req, res) };
}
