/** A command line the script cannot run with: its message is printed with the usage, and the exit code is 2. */
export class UsageError extends Error {}

export type CommandLine<T> = { options: T } | { exitCode: number };

/**
 * The options `parse` reads from this process's arguments; or, with nothing to run, the exit code:
 * 0 after --help or -h (the usage printed), 2 after a UsageError (its message and the usage printed).
 */
export function readCommandLine<T>(usage: string, parse: (argv: string[]) => T): CommandLine<T> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    return { exitCode: 0 };
  }
  try {
    return { options: parse(argv) };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${usage}\n`);
    return { exitCode: 2 };
  }
}
