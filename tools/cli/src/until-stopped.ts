const PARENT_CHECK_MS = 500;

/**
 * Resolves on SIGINT or SIGTERM, or once the process that started this one is gone. A receiver run
 * as `npx rsd webhooks listen &` has npm and a shell between it and whoever stops it, and neither
 * passes SIGTERM on: `kill %1` would end them and leave the receiver holding its port, orphaned.
 */
export function untilStopped(parentPid: () => number = () => process.ppid): Promise<void> {
  const startedBy = parentPid();
  return new Promise((resolve) => {
    const done = () => {
      clearInterval(watch);
      resolve();
    };
    const watch = setInterval(() => {
      if (parentPid() !== startedBy) done();
    }, PARENT_CHECK_MS).unref();
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, done);
  });
}
