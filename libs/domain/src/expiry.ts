/**
 * The one expiry rule: a credential with an `expiresAt` stops working at that instant (inclusive),
 * whatever events have or have not arrived yet.
 */
export function hasExpired(expiresAt: string | null, now: Date): boolean {
  return expiresAt !== null && now.getTime() >= Date.parse(expiresAt);
}
