import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';

/** kafkajs produces INFO and above; DEBUG entries are never built. */
export const KAFKAJS_LOG_LEVEL = logLevel.INFO;

/**
 * Warnings about trade-offs this adapter makes on purpose: bounded producer retries keep `append`
 * prompt, and a producer whose send failed is replaced (see record-appender.ts).
 */
const DELIBERATE = new Set(['Limiting retries for the idempotent producer may invalidate EoS guarantees']);

/**
 * Routes kafkajs's own log lines into the service's pino logger. kafkajs narrates every join,
 * commit and reconnect at INFO, so INFO becomes pino debug and only WARN and ERROR stay visible.
 */
export function kafkaLogCreator(log: Logger): logCreator {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return () =>
    ({ namespace, level, log: entry }) => {
      const { message, timestamp: _timestamp, logger: _logger, ...fields } = entry;
      const context = { namespace, ...fields };
      if (level === logLevel.ERROR) kafkaLog.error(context, message);
      else if (level === logLevel.WARN && !DELIBERATE.has(message)) kafkaLog.warn(context, message);
      else kafkaLog.debug(context, message);
    };
}
