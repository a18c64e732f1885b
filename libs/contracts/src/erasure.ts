import { z } from 'zod';
import { organizationIdSchema, utcInstantSchema } from './ids';

/*
 * Decision 56's offboarding, apart from the domain's events: what a service says once it has purged
 * an offboarded organization, and what the credentials service answers of an offboarding.
 */

/**
 * Where each service says it has purged an offboarded organization (the credentials service follows
 * it to know when the offboarding is done). Not one of TOPICS' domain events: nothing but that
 * follower reads it, and it holds ids and instants only.
 */
export const PURGES_TOPIC = 'rsd.purges.v1';

/** The services that keep something of an organization, each of which purges it on its offboarding. */
export const PURGING_SERVICES = ['credentials', 'read-api', 'notifier'] as const;
export const purgingServiceSchema = z.enum(PURGING_SERVICES);
export type PurgingService = z.infer<typeof purgingServiceSchema>;

export const ORGANIZATION_PURGED_TYPE = 'com.resiliencescore.organization.purged.v1';
/** One service purged what it keeps of the organization (every store it writes): a record on PURGES_TOPIC. */
export const organizationPurgedSchema = z.object({
  type: z.literal(ORGANIZATION_PURGED_TYPE),
  organizationId: organizationIdSchema,
  service: purgingServiceSchema,
  purgedAt: utcInstantSchema,
});
export type OrganizationPurged = z.infer<typeof organizationPurgedSchema>;

export const OFFBOARDING_STATUSES = ['pending', 'done'] as const;

/** GET /v1/organizations/{organizationId}/offboarding */
export const offboardingSchema = z
  .object({
    status: z.enum(OFFBOARDING_STATUSES).meta({
      description: '`pending` until every service has purged the organization, then `done`',
    }),
    startedAt: utcInstantSchema.meta({ description: 'When the offboarding was asked for' }),
    doneAt: utcInstantSchema.nullable().meta({ description: 'When the last service purged it; null while pending' }),
  })
  .meta({ id: 'Offboarding' });
export type Offboarding = z.infer<typeof offboardingSchema>;

/** The 202 of a recipient's erasure: which data subject's key was destroyed, and when. */
export const erasureSchema = z
  .object({
    subject: z.string().meta({
      description:
        "Whose key was destroyed: `grant:<clientId>` for a grant's recipient, `account:<accountId>` for an account's own erasure",
    }),
    erasedAt: utcInstantSchema,
  })
  .meta({ id: 'Erasure' });
export type Erasure = z.infer<typeof erasureSchema>;
