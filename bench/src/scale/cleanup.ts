import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

/**
 * Everything a run leaves behind while it lasts: the product's processes and the data directories
 * (up to several GB each). Removed at the end, when the run fails and on Ctrl-C alike.
 */
const children = new Set<ChildProcess>();
const directories = new Set<string>();

export function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}

export function trackDirectory(dir: string): void {
  directories.add(dir);
}

export function removeDirectory(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  directories.delete(dir);
}

/** Synchronous, so it also runs from the 'exit' event; the data is throwaway, so no graceful stop. */
function cleanUpNow(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  directories.clear();
}

export function cleanUpOnExit(): void {
  process.once('exit', cleanUpNow);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the product and removing the data directories\n`);
      cleanUpNow();
      process.exit(code);
    });
  }
}
