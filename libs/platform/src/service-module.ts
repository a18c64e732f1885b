import type { Express } from 'express';

/**
 * A service as the composition roots see it: its HTTP app (with its own metrics and readiness
 * checks inside), the background work it runs, and how to stop it. A service's own main.ts and the
 * embedded runtime compose these and reach no further into a service.
 */
export interface ServiceModule {
  name: string;
  app: Express;
  /** Stops the background work (consumers, relays, schedulers) and closes the stores it opened. */
  stop(): Promise<void>;
}
