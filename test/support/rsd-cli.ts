import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './embedded-process';

const run = promisify(execFile);

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** A finished command's exit code and output, whether it succeeded or not: a CLI's failure is what many tests assert. */
export async function outcomeOf(pending: Promise<{ stdout: string; stderr: string }>): Promise<CliOutcome> {
  try {
    const { stdout, stderr } = await pending;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CliOutcome;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The real `rsd` bin with `env` on top of the suite's environment: its exit code and output; never throws. */
export function runRsd(args: string[], env: Record<string, string> = {}): Promise<CliOutcome> {
  return outcomeOf(run('node', [join(REPO_ROOT, 'tools/cli/bin/rsd.js'), ...args], { env: { ...process.env, ...env } }));
}

/** `npx rsd …` from the repository, as the README has it; never throws. */
export function npxRsd(args: string[], env: Record<string, string> = {}): Promise<CliOutcome> {
  return outcomeOf(run('npx', ['rsd', ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } }));
}
