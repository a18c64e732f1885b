import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, secretsFromFiles, type Logger } from '@rsd/platform';
import type { SecretSpec } from '@rsd/ports';

/**
 * The environment with every secret the specs name: as configured (the variable, or the file its
 * `<VARIABLE>_FILE` names, as an orchestrator mounts a secret), else (with a data directory) read
 * from or made into its file in the data directory; and which of them this call made. Where a
 * required one is none of these, a ConfigError names them all, before anything is opened: no retry
 * mends it.
 */
export async function resolveSecrets(
  specs: readonly SecretSpec[],
  env: NodeJS.ProcessEnv,
  dataDir: string | undefined,
  log: Logger,
): Promise<{ env: NodeJS.ProcessEnv; created: string[] }> {
  const fromFiles = secretsFromFiles(
    env,
    specs.map((spec) => spec.variable),
  );
  const resolved = fromFiles.env;
  const created: string[] = [];
  const problems = fromFiles.problems.map(({ variable, message }) => `${variable}: ${message}`);
  for (const spec of specs) {
    if (resolved[spec.variable] || spec.unlessSet?.some((name) => resolved[name])) continue;
    if (dataDir === undefined) {
      if (spec.requiredBecause) problems.push(`${spec.variable}: is required on the distributed runtime: ${spec.requiredBecause}`);
      continue;
    }
    const secret = await loadOrCreateSecretFile(dataDir, spec);
    if (secret.created) {
      created.push(spec.variable);
      log.info({ file: spec.file }, `generated ${spec.variable} into the data directory`);
    }
    resolved[spec.variable] = secret.value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { env: resolved, created };
}

/** The first start writes it (`wx`: two processes starting at once cannot both); every later one reads it. */
export async function loadOrCreateSecretFile(
  dataDir: string,
  spec: Pick<SecretSpec, 'file' | 'generate'>,
): Promise<{ value: string; created: boolean }> {
  const path = join(dataDir, spec.file);
  try {
    return { value: (await readFile(path, 'utf8')).trim(), created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const value = spec.generate();
  await writeFile(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return { value, created: true };
}
