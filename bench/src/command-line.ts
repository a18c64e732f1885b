import { parseArgs } from 'node:util';

/** A command line the script cannot run with: its message is printed with the usage, and the exit code is 2. */
export class UsageError extends Error {}

/**
 * The options `parse` reads from this process's arguments. With nothing to run, the process exits: 0
 * after --help or -h (the usage printed), 2 after a UsageError (its message and the usage printed).
 */
export function optionsOrExit<T>(usage: string, parse: (argv: string[]) => T): T {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  try {
    return parse(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${usage}\n`);
    process.exit(2);
  }
}

/**
 * A command's flags, by long name (`sizes` for `--sizes`), each with what to do with its value:
 * undefined when the flag ends the command line without one. A flag given twice is handled twice.
 */
export type Flags = Record<string, (value: string | undefined, flag: string) => void>;

/**
 * Reads `argv` with node:util's parseArgs (`--flag value` and `--flag=value`) and hands each flag's
 * value to its handler, in the order given. Every flag takes a value. parseArgs runs in its lenient
 * mode and this checks its tokens instead: the first argument that is none of the flags (an unknown
 * or short flag, a positional argument, `--`) is a UsageError in the command's own words,
 * `unknownArgument(arg)` with the argument as typed, rather than in Node's.
 */
export function readFlags(argv: readonly string[], flags: Flags, unknownArgument: (arg: string) => string): void {
  const { tokens } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(Object.keys(flags).map((name) => [name, { type: 'string' as const }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    const known = token.kind === 'option' && token.rawName === `--${token.name}` && Object.hasOwn(flags, token.name);
    const handle = known ? flags[token.name] : undefined;
    if (token.kind !== 'option' || handle === undefined) throw new UsageError(unknownArgument(argv[token.index] ?? ''));
    handle(token.value, token.rawName);
  }
}

/** A flag's value, or a UsageError naming the flag when the command line ended without one. */
export function required(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`${flag} needs a value`);
  return value;
}
