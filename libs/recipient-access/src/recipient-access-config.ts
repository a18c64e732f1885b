import { z } from 'zod';
import { CLIENT_ID_PREFIX_PATTERN } from '@rsd/contracts';
import { parseAddressRange } from '@rsd/domain';
import { env } from '@rsd/platform';

const prefix = (fallback: string) =>
  env
    .string(fallback)
    .pipe(z.string().regex(CLIENT_ID_PREFIX_PATTERN, 'must be a lowercase letter then up to 15 lowercase letters or digits'));

/** A comma list in which every item must pass `check`; each bad item is named in the error. */
const checkedList = (check: (item: string) => string | undefined) =>
  env.list().superRefine((items, ctx) => {
    for (const item of items) {
      const problem = check(item);
      if (problem) ctx.addIssue({ code: 'custom', message: `"${item}" ${problem}` });
    }
  });

const addressRanges = () => checkedList((item) => (parseAddressRange(item) ? undefined : 'is not an IP address or CIDR range'));

/** Patterns are matched case-insensitively; a comma always separates patterns, so none may contain one. */
const userAgentPatterns = () =>
  checkedList((item) => {
    try {
      new RegExp(item, 'i');
      return undefined;
    } catch {
      return 'is not a valid regular expression';
    }
  });

/**
 * The variables of how recipients are let in, read the same by every service that serves them (the
 * read API, the notifier): one deployment, one set of rules.
 */
export const recipientAccessConfigShape = {
  CLIENT_ID_PREFIX: prefix('rs'),
  RATE_LIMIT_PER_MINUTE: env.positiveInt(120),
  /** Decision 42: one recipient account's reads a minute, portfolio pages and per-customer reads together. */
  ACCOUNT_RATE_LIMIT_PER_MINUTE: env.positiveInt(1200),
  FAILED_AUTH_LIMIT_PER_MINUTE: env.positiveInt(120),
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(32).default(0),
  EDGE_DENY_CIDRS: addressRanges(),
  EDGE_ALLOW_CIDRS: addressRanges(),
  EDGE_BLOCKED_USER_AGENTS: userAgentPatterns(),
};

export type RecipientAccessConfig = z.infer<z.ZodObject<typeof recipientAccessConfigShape>>;
