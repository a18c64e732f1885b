export { Client, type ClientOptions, type HistoryOptions } from './client.js';
export { Portfolio, type PageOptions, type PortfolioOptions } from './portfolio.js';
export { Webhooks, type CreateWebhookOptions, type WebhookChange } from './webhooks.js';
export {
  AccessReviews,
  Authorizations,
  MAX_BATCH,
  Organization,
  verifyAccessReviewReport,
  type AccessLogOptions,
  type AccessReviewListOptions,
  type AccessReviewReportOptions,
  type VerifiedAccessReviewReport,
  type AuditLogOptions,
  type ListOptions,
  type OrganizationOptions,
  type PublishOptions,
  type Published,
} from './organization.js';
export { USER_AGENT, type RequestOptions, type TransportOptions } from './transport.js';
export { VERSION } from './version.js';
export {
  AccessReviewCompleted,
  AccessReviewItemDecided,
  AccessReviewItemNotFound,
  AccessReviewNotFound,
  AddressNotAllowed,
  ApiConnectionError,
  ApiError,
  ApiTimeoutError,
  AuthorizationInactive,
  AuthorizationNotFound,
  ForbiddenOrganization,
  InvalidToken,
  KeyAlreadyClaimed,
  KeyReadOnly,
  ValidationFailed,
  RecipientAccountNotFound,
  OfferNotFound,
  OfferNotPending,
  OffboardingNotConfirmed,
  OffboardingNotFound,
  WebhookLimitReached,
  WebhookMessageNotFound,
  WebhookNotActive,
  WebhookNotFound,
  WebhookTargetNotAllowed,
  type ErrorDetail,
  CredentialInactive,
  CredentialNotFound,
  EdgeBlocked,
  InsufficientScope,
  InvalidApiKey,
  InvalidClientId,
  InvalidParameter,
  MissingApiKey,
  PillarsNotFound,
  RateLimited,
  ResilienceScoreError,
  ScoreNotFound,
  ServiceUnavailable,
  SignatureError,
} from './errors.js';
export { verifyEvidence, type VerifiedEvidence } from './signature.js';
export {
  ACCESS_REVIEW_REPORT_JWS_TYPE,
  CERTIFICATE_JWS_TYPE,
  verifyCertificate,
  verifySignedJws,
  type VerifiedCertificate,
  type VerifiedJws,
} from './certificate.js';
export { verifyWebhook, type VerifyWebhookOptions, type WebhookHeaders } from './webhook.js';
export type * from './types.js';
