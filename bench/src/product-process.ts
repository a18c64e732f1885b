import type { ChildProcess } from 'node:child_process';

/** The product's process as the bench that started it watches it. */
export interface WatchedProduct {
  child: ChildProcess;
  /** Resolves once the process has exited. */
  exited: Promise<void>;
  /** Why the process ended, once it has. */
  exit(): string | undefined;
}

/** The JSON object of a log line, or undefined for any other line. */
export function parseJsonLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Resolves with what the product's ready signal gives (`listen` hands over the callback to call
 * with it), or fails with `notReady` after `timeoutMs`, or with the exit if the process ends first.
 */
export function whenReady<T>(
  product: WatchedProduct,
  timeoutMs: number,
  notReady: string,
  listen: (onReady: (ready: T) => void) => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return new Promise<T>((done, fail) => {
    listen(done);
    timer = setTimeout(() => fail(new Error(notReady)), timeoutMs);
    void product.exited.then(() => fail(new Error(`the product ${product.exit()}`)));
  }).finally(() => clearTimeout(timer));
}

/** What `start` gives; if it fails, the product is killed first (when it still runs), then the error goes on. */
export async function killedOnFailure<T>(product: WatchedProduct, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if (product.exit() === undefined) {
      product.child.kill('SIGKILL');
      await product.exited;
    }
    throw error;
  }
}

/** SIGTERM, and SIGKILL if the process is still there after `killAfterMs`; resolves once it has exited. */
export async function terminate(product: WatchedProduct, killAfterMs: number): Promise<void> {
  product.child.kill('SIGTERM');
  const kill = setTimeout(() => product.child.kill('SIGKILL'), killAfterMs);
  await product.exited;
  clearTimeout(kill);
}
