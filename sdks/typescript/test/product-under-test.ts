/**
 * The running product as the SDK's product suites see it, on either runtime: each service's origin,
 * and tokens signed as the credentials service and score ingest verify them (a development token
 * from the embedded runtime's data directory, or the distributed runtime's JWT_HS256_SECRET).
 */
export interface ProductUnderTest {
  urls: { readApi: string; credentials: string; scoreIngest: string; notifier: string };
  /** A token with these claims: `org` for an organization's administrator, none for a scoring engine. */
  token(claims: { org?: string; scope: string }): Promise<string>;
}
