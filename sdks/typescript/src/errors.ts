/**
 * The base of everything this package throws on purpose: a refusal (`ApiError`), a failed verification
 * (`SignatureError`) or a network failure (`ApiConnectionError`). A call cancelled by its own signal
 * rejects with that signal's reason instead.
 */
export class ResilienceScoreError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * No answer: the connection could not be made, was reset or closed before a complete answer. Thrown once
 * the retries the request allows are spent; `cause` holds the underlying error.
 */
export class ApiConnectionError extends ResilienceScoreError {}

/** No complete answer within the timeout (the client's, or the call's own). */
export class ApiTimeoutError extends ApiConnectionError {}

/** One problem of a refused request body. */
export interface ErrorDetail {
  path?: string;
  message?: string;
  /** The item of a batch it concerns. */
  index?: number;
}

/** What the API answered with a refusal; the subclass names the code. */
export class ApiError extends ResilienceScoreError {
  readonly status: number;
  /** The body's `code`; undefined for the edge policy's 403 and for 429, which have none. */
  readonly code: string | undefined;
  /** The body's `requestId` (or the `x-request-id` header): quote it to the operator. */
  readonly requestId: string | undefined;
  /** The body's `details` (VALIDATION_FAILED names every problem there, with `index` for a batch's items). */
  readonly details: ErrorDetail[] | undefined;

  constructor(init: {
    status: number;
    code?: string | undefined;
    message: string;
    requestId?: string | undefined;
    details?: ErrorDetail[] | undefined;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details;
  }
}

export class InvalidClientId extends ApiError {}
export class InvalidParameter extends ApiError {}
export class MissingApiKey extends ApiError {}
export class InvalidApiKey extends ApiError {}
export class CredentialInactive extends ApiError {}
export class AddressNotAllowed extends ApiError {}
export class InsufficientScope extends ApiError {}
/** 403 without a code: the edge security policy refused the request before anything else. */
export class EdgeBlocked extends ApiError {}
export class CredentialNotFound extends ApiError {}
export class ScoreNotFound extends ApiError {}
export class PillarsNotFound extends ApiError {}
/** 401 INVALID_TOKEN: an organization's or a scoring engine's bearer token is missing, malformed, expired or not trusted. */
export class InvalidToken extends ApiError {}
/** 403 FORBIDDEN_ORGANIZATION: the token administers another organization. */
export class ForbiddenOrganization extends ApiError {}
/** 404 AUTHORIZATION_NOT_FOUND: no such Client ID in this organization. */
export class AuthorizationNotFound extends ApiError {}
/** 409 AUTHORIZATION_INACTIVE: the authorization is revoked or expired. */
export class AuthorizationInactive extends ApiError {}
/** 409 KEY_ALREADY_CLAIMED: the key was claimed; rotate it for a new one. */
export class KeyAlreadyClaimed extends ApiError {}
/** 400 VALIDATION_FAILED: a request body was refused; `details` names every problem. */
export class ValidationFailed extends ApiError {}
/** 404 RECIPIENT_ACCOUNT_NOT_FOUND: a grant to an account (`keyDelivery: 'account'`) names no account there is. */
export class RecipientAccountNotFound extends ApiError {}
/** 404 OFFER_NOT_FOUND: no grant with that Client ID was offered to this account (whether it exists or not). */
export class OfferNotFound extends ApiError {}
/** 409 OFFER_NOT_PENDING: the offer no longer waits for an answer: answered the other way, revoked or expired. */
export class OfferNotPending extends ApiError {}
/** 404 WEBHOOK_NOT_FOUND: this owner (grant, portfolio, organization) has no webhook with that id. */
export class WebhookNotFound extends ApiError {}
/** 404 WEBHOOK_MESSAGE_NOT_FOUND: the webhook has no delivery with that messageId in the last 7 days. */
export class WebhookMessageNotFound extends ApiError {}
/** 409 WEBHOOK_NOT_ACTIVE: a test or a redelivery of a paused or disabled webhook; re-enable it with `update(id, { enabled: true })`. */
export class WebhookNotActive extends ApiError {}
/** 409 WEBHOOK_LIMIT_REACHED: the owner has as many webhooks as it may; delete one first. */
export class WebhookLimitReached extends ApiError {}
/** 400 WEBHOOK_TARGET_NOT_ALLOWED: the URL is not https, or its host is a loopback, private or metadata address (decision 28). */
export class WebhookTargetNotAllowed extends ApiError {}
/**
 * 403 KEY_READ_ONLY: the key was replaced by a rotation and only reads until its overlap ends (decision 50):
 * rotating, releasing a grant and managing webhooks take the current key.
 */
export class KeyReadOnly extends ApiError {}

/** 404 ACCESS_REVIEW_NOT_FOUND: no such access review in the organization (decision 54). */
export class AccessReviewNotFound extends ApiError {}
/** 404 ACCESS_REVIEW_ITEM_NOT_FOUND: the review has no item for that Client ID. */
export class AccessReviewItemNotFound extends ApiError {}
/** 409 ACCESS_REVIEW_COMPLETED: the review is completed; nothing more is decided in it. */
export class AccessReviewCompleted extends ApiError {}
/** 409 ACCESS_REVIEW_ITEM_DECIDED: the item was decided already; a decision stands. */
export class AccessReviewItemDecided extends ApiError {}
/** 400 OFFBOARDING_NOT_CONFIRMED: `confirm` is not the organization id (decision 56): nothing was done. */
export class OffboardingNotConfirmed extends ApiError {}
/** 404 OFFBOARDING_NOT_FOUND: the organization was never offboarded, or its offboarding was done more than 30 days ago. */
export class OffboardingNotFound extends ApiError {}

/** Thrown once the retries are spent; `retryAfter` is the seconds the last answer asked to wait. */
export class RateLimited extends ApiError {
  readonly retryAfter: number | undefined;

  constructor(init: ConstructorParameters<typeof ApiError>[0] & { retryAfter: number | undefined }) {
    super(init);
    this.retryAfter = init.retryAfter;
  }
}

export class ServiceUnavailable extends ApiError {
  readonly retryAfter: number | undefined;

  constructor(init: ConstructorParameters<typeof ApiError>[0] & { retryAfter: number | undefined }) {
    super(init);
    this.retryAfter = init.retryAfter;
  }
}

/**
 * A response whose signature or Content-Digest does not verify, or a webhook delivery that does not
 * verify with the subscription's secret (decision 37 names one class for both): its data is never returned.
 */
export class SignatureError extends ResilienceScoreError {}

const BY_CODE: Record<string, typeof ApiError> = {
  INVALID_CLIENT_ID: InvalidClientId,
  INVALID_PARAMETER: InvalidParameter,
  MISSING_API_KEY: MissingApiKey,
  INVALID_API_KEY: InvalidApiKey,
  CREDENTIAL_INACTIVE: CredentialInactive,
  ADDRESS_NOT_ALLOWED: AddressNotAllowed,
  INSUFFICIENT_SCOPE: InsufficientScope,
  CREDENTIAL_NOT_FOUND: CredentialNotFound,
  SCORE_NOT_FOUND: ScoreNotFound,
  PILLARS_NOT_FOUND: PillarsNotFound,
  INVALID_TOKEN: InvalidToken,
  FORBIDDEN_ORGANIZATION: ForbiddenOrganization,
  AUTHORIZATION_NOT_FOUND: AuthorizationNotFound,
  AUTHORIZATION_INACTIVE: AuthorizationInactive,
  KEY_ALREADY_CLAIMED: KeyAlreadyClaimed,
  VALIDATION_FAILED: ValidationFailed,
  RECIPIENT_ACCOUNT_NOT_FOUND: RecipientAccountNotFound,
  OFFER_NOT_FOUND: OfferNotFound,
  OFFER_NOT_PENDING: OfferNotPending,
  WEBHOOK_NOT_FOUND: WebhookNotFound,
  WEBHOOK_MESSAGE_NOT_FOUND: WebhookMessageNotFound,
  WEBHOOK_NOT_ACTIVE: WebhookNotActive,
  WEBHOOK_LIMIT_REACHED: WebhookLimitReached,
  WEBHOOK_TARGET_NOT_ALLOWED: WebhookTargetNotAllowed,
  KEY_READ_ONLY: KeyReadOnly,
  ACCESS_REVIEW_NOT_FOUND: AccessReviewNotFound,
  ACCESS_REVIEW_ITEM_NOT_FOUND: AccessReviewItemNotFound,
  ACCESS_REVIEW_COMPLETED: AccessReviewCompleted,
  ACCESS_REVIEW_ITEM_DECIDED: AccessReviewItemDecided,
  OFFBOARDING_NOT_CONFIRMED: OffboardingNotConfirmed,
  OFFBOARDING_NOT_FOUND: OffboardingNotFound,
};

/** The error for a non-2xx answer; a code without a class of its own (KEY_HELD_BY_ACCOUNT, CLAIM_LINK_USED, …) is a plain ApiError. */
export function errorFor(status: number, headers: Headers, body: Uint8Array): ApiError {
  const fields = errorFields(body);
  const init = {
    status,
    code: fields.code,
    message: fields.message ?? `HTTP ${status}`,
    requestId: fields.requestId ?? headers.get('x-request-id') ?? undefined,
    details: fields.details,
  };
  if (status === 429) return new RateLimited({ ...init, retryAfter: retryAfterSeconds(headers) });
  if (status === 503) return new ServiceUnavailable({ ...init, retryAfter: retryAfterSeconds(headers) });
  if (status === 403 && init.code === undefined) return new EdgeBlocked(init);
  const ErrorClass = (init.code !== undefined && BY_CODE[init.code]) || ApiError;
  return new ErrorClass(init);
}

/** `Retry-After` in whole seconds (rounded up), as delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const milliseconds = retryAfterMilliseconds(headers);
  return milliseconds === undefined ? undefined : Math.ceil(milliseconds / 1000);
}

/** `Retry-After` as the milliseconds to wait from now: delta-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMilliseconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function errorFields(body: Uint8Array): { code?: string; message?: string; requestId?: string; details?: ErrorDetail[] } {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    if (typeof parsed !== 'object' || parsed === null) return {};
    const { code, message, requestId, details } = parsed as Record<string, unknown>;
    return {
      ...(Array.isArray(details) ? { details: details as ErrorDetail[] } : {}),
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof message === 'string' ? { message } : {}),
      ...(typeof requestId === 'string' ? { requestId } : {}),
    };
  } catch {
    // Not JSON (a proxy's error page): the status says what there is to say.
    return {};
  }
}
