import type { Logger } from 'pino';

export type Closer = () => Promise<void>;

/** One closer for several: each runs after the one before it has finished, in the order given. */
export function inOrder(...closers: Closer[]): Closer {
  return async () => {
    for (const close of closers) await close();
  };
}

/** What a service stops: a job (`stop`), something opened (`close`), or a step of its own. */
export type Stoppable = { stop(): void | Promise<void> } | { close(): void | Promise<void> } | (() => unknown);

/**
 * Stops each part after the one before it, in the order given: a job before the store it writes. A part
 * that can be closed is closed, even where its object also has a `stop` of its own (a subscription's
 * class keeps one for its loop, private to the type but there at run time); a job is stopped.
 */
export function stopInOrder(...parts: readonly Stoppable[]): Closer {
  return inOrder(
    ...parts.map((part): Closer => {
      if (typeof part === 'function') return async () => void (await part());
      return 'close' in part ? async () => part.close() : async () => part.stop();
    }),
  );
}

/**
 * Runs the closers in order on SIGTERM/SIGINT, within a deadline; exits non-zero if they do not
 * finish in time or one fails.
 */
export function onShutdown(log: Logger, closers: Closer[], deadlineMs = 10_000): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      log.error({ deadlineMs }, 'shutdown deadline passed; exiting');
      exitAfterFlush(log, 1);
    }, deadlineMs);
    deadline.unref();
    void (async () => {
      let failed = false;
      for (const close of closers) {
        try {
          await close();
        } catch (error) {
          failed = true;
          log.error({ err: error }, 'error while shutting down');
        }
      }
      log.info('stopped');
      exitAfterFlush(log, failed ? 1 : 0);
    })();
  };
  // `on`, not `once`: a second signal must find the handler, which ignores it, rather than Node's default,
  // which kills the process mid-shutdown. One comes whenever the process is npm's child (`npm start`
  // execs it): a signal to the process group reaches it once directly and once more through npm.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * Standard output is written asynchronously (logger.ts), so the last lines, "stopped" among them,
 * could be lost to an immediate exit: flush first, but never wait on it for long.
 */
function exitAfterFlush(log: Logger, code: number): void {
  setTimeout(() => process.exit(code), 1_000).unref();
  log.flush(() => process.exit(code));
}

/** Failures whose message says it all: a stack trace would bury it. */
const PLAIN_FAILURES = new Set(['ConfigError', 'StartDeadlineError']);

/**
 * Runs a service's composition root: a bad configuration prints its problems, a missed start-up
 * deadline its one line, any other start-up failure its cause, and the process exits 1.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    const message =
      error instanceof Error && PLAIN_FAILURES.has(error.name)
        ? error.message
        : `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  });
}
