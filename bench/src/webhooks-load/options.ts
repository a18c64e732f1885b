import { readFlags, required, UsageError } from '../command-line';

/** What `node bench/dist/webhooks-load.js …` was asked for. */
export interface WebhooksLoadOptions {
  /** Organizations, each with one authorization, one webhook and one score change. */
  subscriptions: number;
  /** Creates in flight at once during the setup. */
  setupConcurrency: number;
  /** One delivery in this many has its signature checked (1 checks every one). */
  verifyEvery: number;
  /** How long to wait for the last delivery before giving up and reporting what arrived. */
  drainTimeoutMs: number;
  /** The goal: drained within this many seconds of the first post. */
  goalS: number;
  /** Where the product writes a V8 CPU profile (node --cpu-prof), when asked. */
  cpuProfileDir: string | undefined;
  /** Settings handed to the product on top of the bench's own (WEBHOOK_CONCURRENCY=64, say), to try a knob. */
  productEnv: Record<string, string>;
}

export const USAGE = `Usage: node bench/dist/webhooks-load.js [--subscriptions 10000] [--setup-concurrency 16]
                                       [--verify-every 10] [--drain-timeout-s 600]
                                       [--cpu-prof DIR] [--env NAME=VALUE]...

  --subscriptions N       organizations, each with one qr_score authorization, one score.updated
                          webhook and one score change (default 10000; 10k and 1k are accepted)
  --setup-concurrency N   authorization and webhook creates in flight at once (default 16)
  --verify-every N        check the signature of one delivery in N (default 10; 1 checks all)
  --drain-timeout-s S     give up waiting for the last delivery after S seconds (default 600)
  --cpu-prof DIR          run the product under node --cpu-prof, writing the profile into DIR
  --env NAME=VALUE        a setting for the product on top of the bench's (repeatable), to try a knob
                          such as WEBHOOK_CONCURRENCY; the report names every one given`;

export function parseOptions(argv: readonly string[]): WebhooksLoadOptions {
  const options: WebhooksLoadOptions = {
    subscriptions: 10_000,
    setupConcurrency: 16,
    verifyEvery: 10,
    drainTimeoutMs: 600_000,
    goalS: 60,
    cpuProfileDir: undefined,
    productEnv: {},
  };
  readFlags(
    argv,
    {
      subscriptions: (value, flag) => {
        options.subscriptions = count(required(value, flag), flag);
      },
      'setup-concurrency': (value, flag) => {
        options.setupConcurrency = count(required(value, flag), flag);
      },
      'verify-every': (value, flag) => {
        options.verifyEvery = count(required(value, flag), flag);
      },
      'drain-timeout-s': (value, flag) => {
        options.drainTimeoutMs = count(required(value, flag), flag) * 1000;
      },
      'cpu-prof': (value, flag) => {
        options.cpuProfileDir = required(value, flag);
      },
      env: (value, flag) => {
        const setting = required(value, flag);
        const at = setting.indexOf('=');
        if (at < 1) fail(`--env: expected NAME=VALUE, got "${setting}"`);
        options.productEnv[setting.slice(0, at)] = setting.slice(at + 1);
      },
    },
    (arg) => `unknown argument "${arg}"`,
  );
  return options;
}

/** 500, 10000, 10k. */
function count(text: string, flag: string): number {
  const match = /^(\d+)([kK]?)$/.exec(text.trim());
  const value = match ? Number(match[1]) * (match[2] ? 1000 : 1) : NaN;
  if (!Number.isSafeInteger(value) || value < 1) fail(`${flag}: "${text}" is not a positive whole number`);
  return value;
}

function fail(message: string): never {
  throw new UsageError(message);
}
