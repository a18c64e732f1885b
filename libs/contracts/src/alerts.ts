import { z } from 'zod';
import { ALERT_TYPES } from './event-names';
import { clientIdSchema, utcInstantSchema } from './ids';

export const alertTypeSchema = z.enum(ALERT_TYPES).meta({ id: 'AlertType' });
export type AlertType = z.infer<typeof alertTypeSchema>;

/**
 * What happened, in each alert's own fields: `expiresAt` for `authorization.expiring`, `address` for
 * `authorization.first_use` and `authorization.new_address`, `failures` for `authorization.auth_failures`.
 * Never a key, a header or a query.
 */
export const alertDetailsShape = {
  address: z.string().max(64).optional().meta({ description: 'The client address of the read (first_use, new_address)' }),
  failures: z.int().min(1).optional().meta({ description: 'Failed authentications within the 5 minutes before (auth_failures)' }),
  expiresAt: utcInstantSchema.optional().meta({ description: 'When the grant expires (expiring)' }),
} as const;

/** A webhook delivery's `data`, and an alert in the console: the grant and what happened. */
export const alertDataSchema = z
  .object({ clientId: clientIdSchema, ...alertDetailsShape })
  .meta({ id: 'AlertData', description: "The grant it is about, and what happened; a delivery's data never carries more" });
export type AlertData = z.infer<typeof alertDataSchema>;

/** Decision 44's thresholds, the same on every runtime. */
export const ALERT_RULES = {
  /** `authorization.expiring` is sent this many days before `expiresAt`, once each. */
  expiryNoticeDays: [7, 1],
  /** A successful read from an address not seen for the grant in this many days is `authorization.new_address`. */
  newAddressDays: 30,
  /** This many failed authentications against one Client ID … */
  failureThreshold: 20,
  /** … within this many minutes raise `authorization.auth_failures` … */
  failureWindowMinutes: 5,
  /** … at most once in this many minutes per Client ID. */
  failureAlertEveryMinutes: 60,
  /** The console's home page lists an organization's last this many alerts. */
  alertsListed: 100,
} as const;

/** One alert as the console lists it. */
export const alertSchema = z
  .object({
    id: z.string().max(64),
    type: alertTypeSchema,
    at: utcInstantSchema.meta({ description: 'When it happened' }),
    ...alertDataSchema.shape,
  })
  .meta({ id: 'Alert' });
export type Alert = z.infer<typeof alertSchema>;

/** GET /v1/organizations/{organizationId}/alerts: the organization's last alerts, newest first (the console's home page, decision 51). */
export const alertListSchema = z
  .object({ alerts: z.array(alertSchema).max(ALERT_RULES.alertsListed).meta({ description: 'Newest first' }) })
  .meta({ id: 'AlertList' });
export type AlertList = z.infer<typeof alertListSchema>;
