import { readFileSync } from 'node:fs';

/** What is wrong with one variable, for a configuration error that names it. */
export interface VariableProblem {
  variable: string;
  message: string;
}

/**
 * The environment with each of `variables` that is not set read from the file `<VARIABLE>_FILE`
 * names, as an orchestrator mounts its secrets (a Kubernetes Secret's key, a Compose secret). The
 * file's content is the value, its final line break dropped. A variable set both ways, an unreadable
 * or an empty file is a problem, named by the variable and the path, never with the content.
 */
export function secretsFromFiles(
  env: NodeJS.ProcessEnv,
  variables: readonly string[],
): { env: NodeJS.ProcessEnv; problems: VariableProblem[] } {
  const resolved = { ...env };
  const problems: VariableProblem[] = [];
  for (const variable of variables) {
    const fileVariable = `${variable}_FILE`;
    const path = env[fileVariable];
    if (!path) continue;
    if (env[variable]) {
      problems.push({ variable: fileVariable, message: `set either ${variable} or ${fileVariable}, not both` });
      continue;
    }
    const value = readConfiguredFile({ variable: fileVariable, path }, problems)?.replace(/\r?\n$/, '');
    if (value === undefined) continue;
    if (value === '') {
      problems.push({ variable: fileVariable, message: `${path} is empty` });
      continue;
    }
    resolved[variable] = value;
  }
  return { env: resolved, problems };
}

/** A file a variable names, read whole; undefined, and a problem naming the variable, when it cannot be read. */
export function readConfiguredFile(file: { variable: string; path: string }, problems: VariableProblem[]): string | undefined {
  try {
    return readFileSync(file.path, 'utf8');
  } catch (error) {
    problems.push({
      variable: file.variable,
      message: `${file.path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    });
    return undefined;
  }
}
