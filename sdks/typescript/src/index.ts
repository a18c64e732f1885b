export { Client, type ClientOptions, type HistoryOptions, type Webhooks } from './client.js';
export {
  AddressNotAllowed,
  ApiError,
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
export { verifyWebhook, type VerifyWebhookOptions, type WebhookHeaders } from './webhook.js';
export type * from './types.js';
