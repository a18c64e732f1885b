import { z } from 'zod';
import { authorizationSchema, DEFAULT_OVERLAP_SECONDS, recipientTypeSchema, scopeSchema } from './authorization';
import { clientIdSchema, organizationIdSchema, recipientAccountIdSchema, utcInstantSchema } from './ids';
import { pillarBreakdownResourceSchema, scoreResourceSchema } from './resources';

/** Decision 42: a portfolio page holds 1 to 100 items, 50 by default. */
export const PORTFOLIO_LIMIT = { min: 1, max: 100, default: 50 } as const;

/** Decision 42: the account key's prefix; otherwise the key is made as every API key is (decision 5). */
export const ACCOUNT_KEY_PREFIX = 'rsa';

/** GET /v1/portfolio */
export const portfolioSchema = z
  .object({
    accountId: recipientAccountIdSchema,
    name: z.string().nullable(),
    customers: z.int().min(0).meta({ description: 'How many active grants the account holds' }),
  })
  .meta({ id: 'Portfolio' });
export type Portfolio = z.infer<typeof portfolioSchema>;

/** One active grant of the account, as the organization granted it. */
export const portfolioCustomerSchema = authorizationSchema
  .pick({ clientId: true, organizationId: true, recipientType: true, scopes: true, expiresAt: true })
  .meta({ id: 'PortfolioCustomer' });
export type PortfolioCustomer = z.infer<typeof portfolioCustomerSchema>;

const nextCursorSchema = z
  .string()
  .nullable()
  .meta({ description: 'Pass as `cursor` for the next page; null on the last page. A page may hold fewer items than `limit`' });

/** What a page left out of the grants of its range, and why; every count is always there, 0 when none. */
export const portfolioLeftOutSchema = z
  .object({
    addressNotAllowed: z.int().min(0).meta({
      description:
        "Grants of this page's range left out because their allow list (allowedCidrs) does not admit the address this page was read from",
    }),
  })
  .meta({ id: 'PortfolioLeftOut' });
export type PortfolioLeftOut = z.infer<typeof portfolioLeftOutSchema>;

function pageOf<Item extends z.ZodType>(item: Item, id: string) {
  return z.object({ items: z.array(item), nextCursor: nextCursorSchema }).meta({ id });
}

/** A page of the account's grants, read from an address: those whose allow list does not admit it are counted, not listed. */
function grantPageOf<Item extends z.ZodType>(item: Item, id: string) {
  return z.object({ items: z.array(item), nextCursor: nextCursorSchema, leftOut: portfolioLeftOutSchema }).meta({ id });
}

/**
 * A grant an organization offered to the account (`keyDelivery: "account"`) that waits for its answer:
 * what accepting it would let the account read, and who offers it.
 */
export const portfolioOfferSchema = z
  .object({
    clientId: clientIdSchema,
    organizationId: organizationIdSchema,
    recipientType: recipientTypeSchema,
    recipientName: z.string().nullable().meta({ description: 'Who the organization says the recipient is; null: not named' }),
    scopes: z.array(scopeSchema),
    expiresAt: utcInstantSchema.nullable(),
    allowedCidrs: z
      .array(z.string())
      .nullable()
      .meta({ description: 'The client addresses the grant may be read from once accepted; null: any' }),
    offeredAt: utcInstantSchema,
  })
  .meta({ id: 'PortfolioOffer' });
export type PortfolioOffer = z.infer<typeof portfolioOfferSchema>;

export const portfolioCustomersPageSchema = grantPageOf(portfolioCustomerSchema, 'PortfolioCustomersPage');
export type PortfolioCustomersPage = z.infer<typeof portfolioCustomersPageSchema>;
export const portfolioScoresPageSchema = grantPageOf(scoreResourceSchema, 'PortfolioScoresPage');
export type PortfolioScoresPage = z.infer<typeof portfolioScoresPageSchema>;
export const portfolioPillarsPageSchema = grantPageOf(pillarBreakdownResourceSchema, 'PortfolioPillarsPage');
export type PortfolioPillarsPage = z.infer<typeof portfolioPillarsPageSchema>;
export const portfolioOffersPageSchema = pageOf(portfolioOfferSchema, 'PortfolioOffersPage');
export type PortfolioOffersPage = z.infer<typeof portfolioOffersPageSchema>;

/** The most organizations an account may accept offers from automatically. */
export const MAX_AUTO_ACCEPT_ORGANIZATIONS = 1000;

/** PUT and GET /v1/portfolio/auto-accept (credentials service): the list replaces the previous one. */
export const autoAcceptSchema = z
  .strictObject({
    organizationIds: z
      .array(organizationIdSchema)
      .max(MAX_AUTO_ACCEPT_ORGANIZATIONS)
      .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an organization')
      .meta({
        description: `The organizations whose offers (\`keyDelivery: "account"\`) the account accepts as they are made, at most ${MAX_AUTO_ACCEPT_ORGANIZATIONS}; [] for none`,
      }),
  })
  .meta({ id: 'AutoAccept' });
export type AutoAccept = z.infer<typeof autoAcceptSchema>;

/** Decision 42: at most a day of overlap for an account key (a grant's key may keep a week); a day by default, as decision 19's. */
export const ACCOUNT_KEY_OVERLAP_SECONDS = { min: 0, max: 86_400, default: DEFAULT_OVERLAP_SECONDS } as const;

/** POST /v1/portfolio/keys/rotate (credentials service); the body is optional. */
export const rotateAccountKeyRequestSchema = z
  .strictObject({
    overlapSeconds: z
      .int()
      .min(ACCOUNT_KEY_OVERLAP_SECONDS.min)
      .max(ACCOUNT_KEY_OVERLAP_SECONDS.max)
      .optional()
      .meta({ description: `How long the previous account key keeps working (default ${ACCOUNT_KEY_OVERLAP_SECONDS.default})` }),
  })
  .meta({ id: 'RotateAccountKeyRequest' });

/** The 201 of an account key rotation: the new key, shown this once. */
export const rotatedAccountKeySchema = z
  .object({
    accountKey: z.string().meta({ description: 'Shown exactly once; store it now' }),
    previousKeyExpiresAt: utcInstantSchema
      .nullable()
      .meta({ description: 'Until then the previous key works too; null when the overlap is 0' }),
  })
  .meta({ id: 'RotatedAccountKey' });
export type RotatedAccountKey = z.infer<typeof rotatedAccountKeySchema>;
