import {
  ApiConnectionError,
  ApiError as NotifierRefusal,
  Organization,
  RateLimited,
  type OrganizationAlertEvent,
  type Webhooks,
} from '@resilience-score/client';
import { ApiError, ERROR_STATUS, serviceUnavailable, type ConsoleSigner, type ErrorCode, type Logger } from '@rsd/platform';
import { personToken } from '../credentials-api';
import type { ConsoleIdentity } from './console-sessions';

/**
 * What the console does with one organization's alert webhooks: the notifier's whole lifecycle
 * (decision 45), each refusal already the console's own error.
 */
export type AlertWebhooks = Pick<
  Webhooks<OrganizationAlertEvent>,
  'list' | 'create' | 'update' | 'delete' | 'deliveries' | 'rotateSecret' | 'test' | 'redeliver'
>;

/** The signed-in person the console acts for. */
export type ConsoleActor = ConsoleIdentity;

/**
 * The organization's alert webhooks on the notifier, as the console reaches them: the TypeScript SDK's
 * own client, with a minute's token of the console naming the signed-in person (console-delegation).
 * Each refusal of the notifier becomes the console's error of the same code; an unreachable notifier, or
 * one that refuses the console's token (it lacks the console's public key), is a 503 page.
 */
export interface AlertWebhookAccess {
  /** Runs `use` on the actor's webhooks. */
  run<T>(actor: ConsoleActor, use: (webhooks: AlertWebhooks) => Promise<T>): Promise<T>;
}

export function alertWebhookAccess(options: {
  notifierUrl: string;
  signer: ConsoleSigner;
  log: Logger;
  timeoutMs?: number;
}): AlertWebhookAccess {
  const notifierUrl = `${options.notifierUrl.replace(/\/+$/, '')}/v1`;
  return {
    async run(actor, use) {
      const token = await personToken(options.signer, 'notifier', actor);
      const organization = new Organization({
        token,
        organizationId: actor.organizationId,
        notifierUrl,
        timeout: options.timeoutMs ?? 5_000,
        maxRetries: 1,
        maxRetryWait: 2_000,
      });
      const { webhooks } = organization;
      const asConsoleError = <T>(call: Promise<T>): Promise<T> =>
        call.catch((error: unknown) => {
          throw consoleErrorOf(error, options.log);
        });
      return use({
        list: (...args) => asConsoleError(webhooks.list(...args)),
        create: (...args) => asConsoleError(webhooks.create(...args)),
        update: (...args) => asConsoleError(webhooks.update(...args)),
        delete: (...args) => asConsoleError(webhooks.delete(...args)),
        deliveries: (...args) => asConsoleError(webhooks.deliveries(...args)),
        rotateSecret: (...args) => asConsoleError(webhooks.rotateSecret(...args)),
        test: (...args) => asConsoleError(webhooks.test(...args)),
        redeliver: (...args) => asConsoleError(webhooks.redeliver(...args)),
      });
    },
  };
}

function consoleErrorOf(error: unknown, log: Logger): unknown {
  if (error instanceof ApiConnectionError) {
    log.warn({ err: error }, 'console: the notifier could not be reached');
    return serviceUnavailable('The notifier, which sends the alerts, cannot be reached; try again in a moment.', { cause: error });
  }
  if (!(error instanceof NotifierRefusal)) return error;
  if (error.status === 401 || error.status === 403) {
    // The console's own token refused: a configuration to mend, never the person's doing.
    log.error({ status: error.status, code: error.code }, 'console: the notifier refused the console token (check CONSOLE_JWKS_URL there)');
    return serviceUnavailable('The console cannot manage alert webhooks right now.', { cause: error });
  }
  if (error instanceof RateLimited) {
    // The organization's own limit on its webhook management (decision 50): the person waits, as an API client would.
    const seconds = error.retryAfter ?? 60;
    return new ApiError(
      'RATE_LIMITED',
      `This organization has managed and tested its alert webhooks too often in the last minute; try again in ${seconds} seconds.`,
      undefined,
      { 'Retry-After': String(seconds) },
    );
  }
  if (error.status >= 500 || error.code === undefined || !(error.code in ERROR_STATUS)) {
    log.warn({ status: error.status, code: error.code }, 'console: the notifier did not complete a request');
    return serviceUnavailable('The notifier could not complete this request; try again in a moment.', { cause: error });
  }
  const details = (error.details ?? []).map((detail) => ({ path: detail.path ?? '', message: detail.message ?? '' }));
  return new ApiError(error.code as ErrorCode, error.message, details.length > 0 ? details : undefined);
}
