import { UnavailableError } from '@rsd/platform';

/**
 * Which server a failed start-up attempt was waiting for, from the error or its causes: what the
 * starting service's /readyz names and its log says. Undefined when the error is not a driver's.
 */
export function dependencyOf(error: unknown): string | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof UnavailableError) return cause.dependency;
    // What the drivers throw while connecting, before any adapter had a chance to say it.
    if (cause.name.startsWith('KafkaJS') || cause.name === 'UnknownTopicError') return 'kafka';
    if (cause.name.startsWith('Mongo')) return 'mongo';
    if (cause.name === 'ReplyError' || cause.name === 'MaxRetriesPerRequestError' || /\bredis\b/i.test(cause.message)) return 'redis';
  }
  return undefined;
}
