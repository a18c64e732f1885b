import {
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { UnavailableError } from '@rsd/platform';

/** The driver's ways of saying the server cannot be reached now (timeouts included); anything else is a real fault. */
function isOutage(error: unknown): boolean {
  return (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoTopologyClosedError
  );
}

/**
 * The same store, each of its methods turning an outage into the port's UnavailableError (a 503
 * for the caller) instead of letting the driver's error through as a 500.
 */
export function reportingOutages<Store extends object>(store: Store): Store {
  const wrapped: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(store)) {
    wrapped[name] =
      typeof member === 'function'
        ? async (...args: unknown[]): Promise<unknown> => {
            try {
              return await (member as (...args: unknown[]) => Promise<unknown>).apply(store, args);
            } catch (error) {
              throw isOutage(error) ? new UnavailableError('mongo', { cause: error }) : error;
            }
          }
        : member;
  }
  return wrapped as Store;
}
