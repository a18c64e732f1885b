import { readFlags, UsageError } from '../command-line';

export interface SoakOptions {
  /** Length of the traffic phase, outages included. */
  minutes: number;
  /** How long each server stays stopped before it is started again (its own start time comes on top). */
  outageSeconds: number;
  /** The read API's feed staleness bound (decision 29): a revoke answered 202 may be outlived this long. */
  stalenessBoundMs: number;
}

export const USAGE = `usage: npm run soak -- [--minutes N] [--outage-seconds S]

  --minutes N          length of the run, outages included (default 10)
  --outage-seconds S   how long Kafka, the MongoDB-wire server and Redis each stay stopped (default 15)

FEED_STALENESS_BOUND_MS (default 30000) is passed to both read-API replicas and is the bound
a revocation answered 202 "enforcement: pending" is checked against.`;

function positive(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (raw === undefined || raw.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new UsageError(`${name} must be a positive number, got ${raw === undefined ? 'nothing' : `"${raw}"`}`);
  }
  return value;
}

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): SoakOptions {
  const options: SoakOptions = {
    minutes: 10,
    outageSeconds: 15,
    stalenessBoundMs: env.FEED_STALENESS_BOUND_MS === undefined ? 30_000 : positive('FEED_STALENESS_BOUND_MS', env.FEED_STALENESS_BOUND_MS),
  };
  readFlags(
    argv,
    {
      minutes: (value, flag) => {
        options.minutes = positive(flag, value);
      },
      'outage-seconds': (value, flag) => {
        options.outageSeconds = positive(flag, value);
      },
    },
    (arg) => `unknown argument "${arg}"`,
  );
  // Three outages, each with its stop, its pause and a Kafka start, must fit one after another.
  const minimumMinutes = (4 * (options.outageSeconds + 20)) / 60;
  if (options.minutes < minimumMinutes) {
    throw new UsageError(`--minutes must be at least ${minimumMinutes.toFixed(1)} for outages of ${options.outageSeconds} s`);
  }
  return options;
}
