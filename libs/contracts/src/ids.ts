import { z } from 'zod';

/** Organization ids are chosen by the customer; kept URL-safe so they can sit in a path unescaped. */
export const organizationIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"')
  .meta({ id: 'OrganizationId', example: 'acme-insurance' });

export const CLIENT_ID_BODY_MIN = 16;
export const CLIENT_ID_BODY_MAX = 64;
export const CLIENT_ID_PREFIX_PATTERN = /^[a-z][a-z0-9]{0,15}$/;

/** `<prefix>_<body>`: compared exactly as issued, so the pattern is anchored and case-sensitive. */
export function clientIdPattern(prefix: string): RegExp {
  if (!CLIENT_ID_PREFIX_PATTERN.test(prefix)) throw new Error(`invalid client id prefix: ${prefix}`);
  return new RegExp(`^${prefix}_[A-Za-z0-9]{${CLIENT_ID_BODY_MIN},${CLIENT_ID_BODY_MAX}}$`);
}

/** Any well-formed Client ID, whatever the deployment's prefix: used for event payloads. */
export const clientIdSchema = z
  .string()
  .regex(/^[a-z][a-z0-9]{0,15}_[A-Za-z0-9]{16,64}$/, 'must be <prefix>_<16-64 letters or digits>')
  .meta({ id: 'ClientId', example: 'rs_3kTMd9Qx7LwZp2VnB8cY1fRe' });

export const isoDateSchema = z.iso.date().meta({ description: 'ISO calendar date YYYY-MM-DD (UTC)', example: '2026-11-20' });

/** Instants are always written in UTC with milliseconds and `Z`; inputs may carry any offset. */
export const utcInstantSchema = z.iso.datetime({ precision: 3 }).meta({ example: '2026-11-21T08:00:00.000Z' });
export const instantInputSchema = z.iso.datetime({ offset: true });

/** Decision 42: a recipient account, `rcp_` and 24 base62 characters (142 random bits). */
export const RECIPIENT_ACCOUNT_ID_PATTERN = /^rcp_[A-Za-z0-9]{24}$/;
export const recipientAccountIdSchema = z
  .string()
  .regex(RECIPIENT_ACCOUNT_ID_PATTERN, 'must be rcp_<24 letters or digits>')
  .meta({ id: 'RecipientAccountId', example: 'rcp_7Hq2LmX9pRt4Kc8Vw1Nz3Bd6' });
