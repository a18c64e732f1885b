/** Decision 38: claim links live outside the versioned API, on the credentials service's origin. */
export const CLAIM_PATH = '/claim';

/** What the service's logs name instead of a claim link: its path holds the token. */
export const LOGGED_CLAIM_URL = `${CLAIM_PATH}/[redacted]`;

export function claimUrlOf(base: string, token: string): string {
  return `${base.replace(/\/+$/, '')}${CLAIM_PATH}/${token}`;
}
