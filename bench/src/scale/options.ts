import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readFlags, required, UsageError } from '../command-line';
import { ROOT } from '../processes';

/** The embedded runtime, as `npm start` runs it. */
export const PRODUCT_MAIN = 'services/embedded/dist/main.js';

/** What `npm run bench:scale -- …` was asked for. */
export interface ScaleOptions {
  /** Authorizations per data set; each gets as many score events. */
  sizes: number[];
  /** An extra data set: the largest size's authorizations with this many score events (the "10M events start and serve" check). */
  events: number | undefined;
  /** How long a start may take before the column is given up (the old storage replays everything at every start). */
  startTimeoutMs: number;
  /** The create measurement stops after its 1,000 creates or this long, whichever comes first. */
  createBudgetMs: number;
  /**
   * The built tree whose services/embedded/dist/main.js is measured: this one by default, or another
   * (the same product before a change, say, extracted with `git archive`) to compare on the same data.
   */
  productRoot: string;
}

export const USAGE = `Usage: npm run bench:scale -- [--sizes 1000,100000,1000000] [--events 10000000]
                                   [--start-timeout-s 900] [--create-budget-s 120] [--product DIR]
Counts accept k and M: --sizes 1k,100k,1M --events 10M. --product measures the embedded runtime built
in another tree (default: this one) on the same data sets.`;

/** The options of `argv`; a UsageError for a command line that cannot run (--help is optionsOrExit's). */
export function parseOptions(argv: readonly string[]): ScaleOptions {
  const options: ScaleOptions = {
    sizes: [1_000, 100_000, 1_000_000],
    events: undefined,
    startTimeoutMs: 900_000,
    createBudgetMs: 120_000,
    productRoot: ROOT,
  };
  readFlags(
    argv,
    {
      sizes: (value, flag) => {
        options.sizes = required(value, flag)
          .split(',')
          .map((size) => count(size, flag));
      },
      events: (value, flag) => {
        options.events = count(required(value, flag), flag);
      },
      'start-timeout-s': (value, flag) => {
        options.startTimeoutMs = count(required(value, flag), flag) * 1000;
      },
      'create-budget-s': (value, flag) => {
        options.createBudgetMs = count(required(value, flag), flag) * 1000;
      },
      product: (value, flag) => {
        options.productRoot = resolve(required(value, flag));
        if (!existsSync(join(options.productRoot, PRODUCT_MAIN)))
          fail(`--product: ${join(options.productRoot, PRODUCT_MAIN)} does not exist (build that tree)`);
      },
    },
    (arg) => `unknown argument ${arg}`,
  );
  if (options.sizes.length === 0) fail('--sizes needs at least one size');
  // Ascending, so the first column is the reference the p99 ratio is taken against.
  options.sizes = [...new Set(options.sizes)].sort((a, b) => a - b);
  return options;
}

/** 1000, 100k, 1M, 10M. */
function count(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!match) return fail(`${flag}: ${text} is not a count`);
  const value = Number(match[1]) * ({ k: 1e3, m: 1e6 }[match[2]!.toLowerCase()] ?? 1);
  if (!Number.isInteger(value) || value < 1) return fail(`${flag}: ${text} is not a positive whole count`);
  return value;
}

function fail(message: string): never {
  throw new UsageError(message);
}
