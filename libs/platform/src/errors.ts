import { STATUS_CODES } from 'node:http';
import type { ErrorBody } from '@rsd/contracts';

/** Every error the services answer with, and its status: one table, checked exhaustively. */
export const ERROR_STATUS = {
  MISSING_CLIENT_ID: 400,
  INVALID_CLIENT_ID: 400,
  INVALID_ORGANIZATION_ID: 400,
  INVALID_PARAMETER: 400,
  MALFORMED_JSON: 400,
  VALIDATION_FAILED: 400,
  WEBHOOK_TARGET_NOT_ALLOWED: 400,
  OFFBOARDING_NOT_CONFIRMED: 400,
  MISSING_API_KEY: 401,
  INVALID_API_KEY: 401,
  CREDENTIAL_INACTIVE: 401,
  INVALID_TOKEN: 401,
  INVALID_SIGNATURE: 401,
  INSUFFICIENT_SCOPE: 403,
  FORBIDDEN_ORGANIZATION: 403,
  ADDRESS_NOT_ALLOWED: 403,
  EDGE_BLOCKED: 403,
  KEY_READ_ONLY: 403,
  CREDENTIAL_NOT_FOUND: 404,
  SCORE_NOT_FOUND: 404,
  PILLARS_NOT_FOUND: 404,
  AUTHORIZATION_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  WEBHOOK_MESSAGE_NOT_FOUND: 404,
  CLAIM_LINK_NOT_FOUND: 404,
  RECIPIENT_ACCOUNT_NOT_FOUND: 404,
  OFFER_NOT_FOUND: 404,
  ACCESS_REVIEW_NOT_FOUND: 404,
  ACCESS_REVIEW_ITEM_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  OFFBOARDING_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  AUTHORIZATION_INACTIVE: 409,
  WEBHOOK_LIMIT_REACHED: 409,
  WEBHOOK_NOT_ACTIVE: 409,
  KEY_ALREADY_CLAIMED: 409,
  KEY_NOT_CLAIMED: 409,
  KEY_HELD_BY_ACCOUNT: 409,
  OFFER_NOT_PENDING: 409,
  ACCESS_REVIEW_COMPLETED: 409,
  ACCESS_REVIEW_ITEM_DECIDED: 409,
  CLAIM_LINK_USED: 410,
  CLAIM_LINK_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Refusals the specification answers without a `code`: the edge policy's 403 and the 429. They take
 * the same error path as every other refusal; their code stays inside (the access log's `RATE_LIMITED`).
 */
export const CODES_NOT_SENT: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['EDGE_BLOCKED', 'RATE_LIMITED']);

export interface ErrorDetail {
  path: string;
  message: string;
  index?: number;
}

/** Thrown by handlers and use cases; the error middleware turns it into the documented body. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

/** The one place an error body is shaped. `code` is omitted for the edge-policy 403 and for 429. */
export function errorBody(
  status: number,
  code: ErrorCode | undefined,
  message: string,
  extras: { requestId?: string; details?: ErrorDetail[]; now?: Date } = {},
): ErrorBody {
  return {
    error: reasonPhrase(status),
    ...(code ? { code } : {}),
    message,
    timestamp: (extras.now ?? new Date()).toISOString(),
    ...(extras.requestId ? { requestId: extras.requestId } : {}),
    ...(extras.details ? { details: extras.details } : {}),
  };
}
