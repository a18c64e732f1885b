/**
 * The names of the events a webhook may hear of, with nothing else: this module loads no schema
 * library, so a tool that only names them (the CLI's help, built at every start) imports it alone,
 * as `@rsd/contracts/event-names`. Their schemas are in webhooks.ts and alerts.ts.
 */

/** What a recipient's webhooks (a grant's, a portfolio's) may hear of. */
export const RECIPIENT_WEBHOOK_EVENT_TYPES = ['score.updated', 'grade.changed', 'authorization.ended'] as const;

/**
 * Decision 44: what an organization hears of its grants (and, decision 54, of its access reviews). Each is a webhook event type of an
 * organization's webhooks (never of a recipient's) and the type of an alert in the console's list.
 */
export const ALERT_TYPES = [
  'authorization.expiring',
  'authorization.first_use',
  'authorization.new_address',
  'authorization.auth_failures',
  'authorization.key_leaked',
  'authorization.released',
  'access_review.due_soon',
  'access_review.completed',
] as const;
