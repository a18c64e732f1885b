import type { Request, Response } from 'express';
import {
  ALERT_TYPES,
  MAX_WEBHOOKS_PER_ACCOUNT,
  MAX_WEBHOOKS_PER_AUTHORIZATION,
  MAX_WEBHOOKS_PER_ORGANIZATION,
  RECIPIENT_WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  type WebhookOwner,
} from '@rsd/contracts';
import {
  credentialView,
  recipientAccountView,
  scopesAllow,
  webhookOwnerKey,
  type ChangingKey,
  type KeyMatch,
  type Origin,
} from '@rsd/domain';
import {
  checkBearer,
  clientIdPathParameter,
  decodePathSegment,
  errorResponse as error,
  recipientOrigin,
  textHeader,
  tokenOrigin,
  type OpenApiResponse,
  type TokenVerifier,
} from '@rsd/platform';
import type { WebhookOwnerDocumentation } from '@rsd/api-documents';
import type { ViewStore } from '@rsd/ports';
import type { AuthenticatedAccount, AuthenticatedRecipient, AuthenticationRequest, LimitOutcome } from '@rsd/recipient-access';
import type { NotifierConfig } from '../config';

/** Who called, as one owner kind's authentication establishes it. */
export interface OwnerAccess {
  owner: WebhookOwner;
  /** The organization whose score events reach its webhooks (a grant's); kept on each subscription for the planner. */
  organizationId: string;
  /** The events of `events` this caller may not subscribe to (its scopes do not allow them): refused with 403. */
  refusedEvents(events: readonly WebhookEventType[]): WebhookEventType[];
  /**
   * Decision 50: which key the caller presented, its current one or the previous one of a rotation's
   * overlap (which only reads); undefined for a caller with a token, not a key.
   */
  key?: KeyMatch;
  /** The key a webhook this caller makes or re-targets answers to (decision 50); undefined for a token. */
  changingKey?: ChangingKey;
  /**
   * Whether that key is still its holder's current key, read again now: asked after a write that records
   * it, so that a key replaced while the request ran (a rotation that reached the notifier meanwhile)
   * keeps nothing it wrote. Undefined where nothing is read again (a token, or no views given).
   */
  stillCurrent?: () => Promise<boolean>;
  /**
   * Decision 54: the organization whose audit trail records this caller's changes to these webhooks, and
   * who the caller is. Undefined for a recipient account's own webhooks, which are in no organization's trail.
   */
  audit?: WebhookAudit;
}

/** Whose trail a change goes into and who made it: a grant's webhook is the grant's organization's, an organization's its own. */
export interface WebhookAudit {
  owner: 'grant' | 'organization';
  organizationId: string;
  /** The grant whose webhook it is; null for an organization's alert subscription. */
  clientId: string | null;
  origin: Origin;
}

/**
 * One kind of webhook owner (decision 45: one lifecycle, several owners). Everything the lifecycle
 * needs to know of an owner is here; the routes (`webhookRoutes`) and their documentation
 * (`webhookOperations`) are made from it. To add an owner, add its kind to `WebhookOwner`, its key to
 * `webhookOwnerKey`, and a declaration like `grantWebhooks` to the notifier's list (notifier-module.ts).
 */
export interface WebhookOwnerDeclaration extends WebhookOwnerDocumentation {
  /**
   * Checks the caller for the path parameters as received (percent-encoded), in the order of `path`,
   * and throws the documented ApiError when it is refused.
   */
  authenticate(req: Request, res: Response, parameters: readonly string[]): Promise<OwnerAccess>;
  /** The events its webhooks may subscribe to; any other is refused with 400. */
  events: readonly WebhookEventType[];
}

/** A 429 as every limiter answers it: no `code`, Retry-After, and the draft-8 RateLimit headers of the limiter that counted. */
function rateLimited(limits: string): OpenApiResponse {
  return error(`Rate limit exceeded (${limits}); no \`code\``, {
    'Retry-After': { description: 'Whole seconds to wait before retrying (at least 1)', required: true, schema: { type: 'string' } },
    RateLimit: textHeader('Requests left in the current window (IETF draft 8)'),
    'RateLimit-Policy': textHeader('The quota and its window (IETF draft 8)'),
  });
}

/** Decision 50, as the OpenAPI documents say it for an owner authenticated by a key. */
const KEY_READ_ONLY_REFUSAL =
  'KEY_READ_ONLY (the previous key of a rotation’s overlap, which only reads until the overlap ends, or a key a rotation replaced ' +
  'while the request ran: only the current key manages webhooks)';

export type RecipientAuthenticate = (req: Request, res: Response, request: AuthenticationRequest) => Promise<AuthenticatedRecipient>;

/**
 * A grant's webhooks (decision 26): `/customers/{clientId}/webhooks`, authenticated exactly like the
 * read API (the Client ID in the path and `x-api-key`, steps 1–8, allow list and rate limit), each
 * event allowed by the grant's scopes.
 */
export function grantWebhooks(
  authenticate: RecipientAuthenticate,
  config: Pick<NotifierConfig, 'CLIENT_ID_PREFIX' | 'RATE_LIMIT_PER_MINUTE'>,
  /** The notifier's views, to read a key again after a write (decision 50). */
  views?: ViewStore,
): WebhookOwnerDeclaration {
  return {
    path: '/customers/:clientId',
    async authenticate(req, res, [rawClientId]) {
      const recipient = await authenticate(req, res, { rawClientId: rawClientId || undefined });
      const { scopes, organizationId } = recipient.credential;
      // The grant's own key, or the key of the account that holds it (decision 42): a webhook answers to its holder.
      const { accountId, clientId, keyDigest } = recipient;
      const keyOwner = accountId ? webhookOwnerKey({ kind: 'portfolio', accountId }) : clientId;
      const holder = () => (accountId ? views?.get(recipientAccountView, accountId) : views?.get(credentialView, clientId));
      return {
        owner: { kind: 'grant', clientId },
        organizationId,
        refusedEvents: (events) => events.filter((type) => !scopesAllow(type, scopes)),
        key: recipient.key,
        changingKey: { keyDigest, keyOwner },
        ...(views ? { stillCurrent: async () => (await holder())?.keyDigest === keyDigest } : {}),
        // The recipient by the key it presented: the account's when the account's key manages its grant's webhooks.
        audit: { owner: 'grant', organizationId, clientId, origin: recipientOrigin(req, res, accountId ?? clientId) },
      };
    },
    limit: MAX_WEBHOOKS_PER_AUTHORIZATION,
    events: RECIPIENT_WEBHOOK_EVENT_TYPES,
    noun: 'authorization',
    docs: {
      pathParameters: [clientIdPathParameter(config.CLIENT_ID_PREFIX)],
      authenticationResponses: {
        '400': error('MISSING_CLIENT_ID or INVALID_CLIENT_ID (checked before any credential lookup)'),
        '401': error('MISSING_API_KEY, INVALID_API_KEY or CREDENTIAL_INACTIVE (revoked, expired or not active)'),
        '403': error(
          'ADDRESS_NOT_ALLOWED (the credential has an allow list and this client address is not on it), or blocked by the edge security policy (then without `code`)',
        ),
        '404': error('CREDENTIAL_NOT_FOUND: no authorization has this Client ID'),
        '429': rateLimited(
          `${config.RATE_LIMIT_PER_MINUTE} requests per minute per credential, shared with the read API, or too many failed authentications from one address`,
        ),
      },
      operationInfix: '',
      tag: 'Webhooks',
      security: 'apiKey',
      scopeRefusal:
        'INSUFFICIENT_SCOPE (an event the credential’s scopes do not allow; score.updated: qr_score; grade.changed: qr_score or score_trend)',
      readOnlyRefusal: KEY_READ_ONLY_REFUSAL,
    },
  };
}

export type AccountAuthenticate = (req: Request, res: Response) => Promise<AuthenticatedAccount>;

/**
 * A recipient account's webhooks (decision 42): `/portfolio/webhooks`, authenticated by the account
 * key alone (its own limit, shared with its reads), fired for every grant the account holds, each
 * delivery naming its grant's `clientId`. Any event may be subscribed to; each grant's scopes decide
 * what of it reaches the webhook, delivery by delivery.
 */
export function portfolioWebhooks(
  authenticate: AccountAuthenticate,
  config: Pick<NotifierConfig, 'ACCOUNT_RATE_LIMIT_PER_MINUTE'>,
  /** The notifier's views, to read a key again after a write (decision 50). */
  views?: ViewStore,
): WebhookOwnerDeclaration {
  return {
    path: '/portfolio',
    async authenticate(req, res) {
      const { account, key } = await authenticate(req, res);
      const owner = { kind: 'portfolio', accountId: account.accountId } as const;
      const keyDigest = (key === 'current' ? account.keyDigest : account.previousKeyDigest) ?? '';
      // No organization of its own: the planner finds the account's grants of each organization instead.
      return {
        owner,
        organizationId: '',
        refusedEvents: () => [],
        key,
        changingKey: { keyDigest, keyOwner: webhookOwnerKey(owner) },
        ...(views ? { stillCurrent: async () => (await views.get(recipientAccountView, account.accountId))?.keyDigest === keyDigest } : {}),
      };
    },
    limit: MAX_WEBHOOKS_PER_ACCOUNT,
    events: RECIPIENT_WEBHOOK_EVENT_TYPES,
    noun: 'portfolio',
    docs: {
      pathParameters: [],
      authenticationResponses: {
        '401': error('MISSING_API_KEY, or INVALID_API_KEY: not a recipient account key that works now'),
        '403': error('Blocked by the edge security policy (without `code`)'),
        '429': rateLimited(
          `${config.ACCOUNT_RATE_LIMIT_PER_MINUTE} requests per minute per recipient account, shared with its reads, or too many failed authentications from one address`,
        ),
      },
      operationInfix: 'Portfolio',
      tag: 'Portfolio webhooks',
      security: 'apiKey',
      scopeRefusal: 'never for a portfolio: each grant’s scopes decide what of an event reaches it, delivery by delivery',
      readOnlyRefusal: KEY_READ_ONLY_REFUSAL,
    },
  };
}

export type OrganizationLimit = (req: Request, res: Response, organizationId: string) => Promise<LimitOutcome>;

/**
 * An organization's alert webhooks (decision 44): `/organizations/{organizationId}/webhooks`, with the
 * credentials service's bearer token (scope `authorizations:write` for that organization, decision
 * 34), subscribed to the organization's alerts only. Every call counts against the organization's
 * limit a minute (decision 50), once its token is verified: a stranger's calls spend nothing of it.
 */
export function organizationWebhooks(
  verifyToken: TokenVerifier,
  limitOrganization: OrganizationLimit,
  config: Pick<NotifierConfig, 'ORGANIZATION_RATE_LIMIT_PER_MINUTE'>,
): WebhookOwnerDeclaration {
  return {
    path: '/organizations/:organizationId',
    async authenticate(req, res, [rawOrganizationId]) {
      const organizationId = decodePathSegment(rawOrganizationId ?? '');
      const caller = await checkBearer(verifyToken, req.headers.authorization, { scope: 'authorizations:write' }, organizationId);
      const limit = await limitOrganization(req, res, organizationId);
      if (limit.outcome === 'limited') throw limit.refusal;
      return {
        owner: { kind: 'organization', organizationId },
        organizationId,
        refusedEvents: () => [],
        audit: { owner: 'organization', organizationId, clientId: null, origin: tokenOrigin(req, res, caller) },
      };
    },
    limit: MAX_WEBHOOKS_PER_ORGANIZATION,
    events: ALERT_TYPES,
    noun: 'organization',
    docs: {
      pathParameters: [
        {
          name: 'organizationId',
          in: 'path',
          required: true,
          description: 'The organization whose alerts the webhooks hear; the token’s `org` claim must name it',
          schema: { type: 'string', minLength: 1, maxLength: 128 },
        },
      ],
      authenticationResponses: {
        '401': error('INVALID_TOKEN: no bearer token, or one that is invalid or expired', {
          'WWW-Authenticate': { description: 'Bearer', required: true, schema: { type: 'string' } },
        }),
        '403': error(
          'FORBIDDEN_ORGANIZATION (the token administers another organization) or INSUFFICIENT_SCOPE (it lacks authorizations:write)',
        ),
        '429': rateLimited(
          `${config.ORGANIZATION_RATE_LIMIT_PER_MINUTE} requests per minute per organization to its alert webhooks, tests and redeliveries included, counted once the token is verified`,
        ),
      },
      operationInfix: 'Organization',
      tag: 'Organization alert webhooks',
      security: 'bearer',
      scopeRefusal: 'FORBIDDEN_ORGANIZATION or INSUFFICIENT_SCOPE (the token must hold authorizations:write for this organization)',
    },
  };
}
