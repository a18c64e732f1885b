import type { Options } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { ClientRateLimitInfo, IncrementResponse, RateLimitStore, RateLimitStoreFactory } from '@rsd/ports';

export interface LocalFallbackOptions {
  log: Logger;
  /** Called once per switch: true when counting falls back to this replica, false when shared again. */
  onFallback?(active: boolean): void;
}

/**
 * Shared counting with a per-replica safety net. Every call goes to the primary (shared) store; a
 * call it fails is served by the fallback (this replica's memory) instead, so while the shared store
 * is away each replica still enforces the limit on its own — at most limit × replicas in all —
 * rather than failing every request or admitting them all. The first call the primary answers
 * again ends the fallback. All stores of one factory share the switch, so an outage is reported
 * once, not once per limiter.
 */
export function withLocalFallback(
  primary: RateLimitStoreFactory,
  fallback: RateLimitStoreFactory,
  options: LocalFallbackOptions,
): RateLimitStoreFactory {
  const fallbackSwitch = new FallbackSwitch(options);
  return (prefix) => new LocalFallbackStore(primary(prefix), fallback(prefix), prefix, fallbackSwitch);
}

/** Whether counting is currently local, and the one report per change. */
class FallbackSwitch {
  private active = false;

  constructor(private readonly options: LocalFallbackOptions) {}

  primaryFailed(error: unknown, prefix: string): void {
    if (this.active) return;
    this.active = true;
    this.options.log.warn(
      { err: error, prefix },
      'shared rate-limit store unavailable: counting on this replica alone until it answers again',
    );
    this.options.onFallback?.(true);
  }

  primaryAnswered(prefix: string): void {
    if (!this.active) return;
    this.active = false;
    this.options.log.info({ prefix }, 'shared rate-limit store answers again: counting across replicas');
    this.options.onFallback?.(false);
  }
}

class LocalFallbackStore implements RateLimitStore {
  /**
   * Reported as the primary's: keys are shared whenever the primary answers, and express-rate-limit
   * uses this only to decide how strictly it checks that one request is counted once per store.
   */
  readonly localKeys: boolean;

  constructor(
    private readonly primary: RateLimitStore,
    private readonly fallback: RateLimitStore,
    readonly prefix: string,
    private readonly fallbackSwitch: FallbackSwitch,
  ) {
    this.localKeys = primary.localKeys ?? false;
  }

  async init(options: Options): Promise<void> {
    await this.fallback.init?.(options);
    try {
      await this.primary.init?.(options);
    } catch (error) {
      this.fallbackSwitch.primaryFailed(error, this.prefix);
    }
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.primaryOr(
      () => this.primary.get?.(key),
      () => this.fallback.get?.(key),
    );
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.primaryOr(
      () => this.primary.increment(key),
      () => this.fallback.increment(key),
    );
  }

  decrement(key: string): Promise<void> {
    return this.primaryOr(
      () => this.primary.decrement(key),
      () => this.fallback.decrement(key),
    );
  }

  /** Forgets the key in both stores, so a later outage does not bring back counts from an earlier one. */
  async resetKey(key: string): Promise<void> {
    await this.fallback.resetKey(key);
    await this.primaryOr(
      () => this.primary.resetKey(key),
      () => undefined,
    );
  }

  async shutdown(): Promise<void> {
    await Promise.all([this.primary.shutdown?.(), this.fallback.shutdown?.()]);
  }

  private async primaryOr<T>(onPrimary: () => T | Promise<T>, onFallback: () => T | Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await onPrimary();
    } catch (error) {
      this.fallbackSwitch.primaryFailed(error, this.prefix);
      return onFallback();
    }
    this.fallbackSwitch.primaryAnswered(this.prefix);
    return result;
  }
}
