import { z } from 'zod';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once at start-up; every bad variable is reported at once, by name. */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`));
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const optionalString = () =>
  z
    .string()
    .optional()
    .transform((value) => (value === '' ? undefined : value));

/** Building blocks for config schemas read from environment variables (always strings). */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  string: (fallback: string) => z.string().min(1).default(fallback),
  optionalString,
  /** An http(s) URL (a service's public origin, a key list). */
  httpUrl: (fallback: string) => z.string().min(1).default(fallback).pipe(httpUrl),
  /** The same, or unset (empty counts as unset). */
  optionalHttpUrl: () => optionalString().pipe(httpUrl.optional()),
  /** Comma-separated list; blanks dropped. */
  list: () =>
    z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item.length > 0),
      ),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
};

/** ACCESS_LOG_RETENTION_DAYS (decision 21), read by the read API (the stream's retention) and the credentials service (the store's). */
export const accessLogRetentionDays = () => z.coerce.number().int().min(1).max(3650).default(90);

/** Several schemas over one environment (a service's own and its runtime's): all problems at once. */
export function loadConfigs<const S extends readonly z.ZodType[]>(
  schemas: S,
  env: NodeJS.ProcessEnv,
): { -readonly [K in keyof S]: z.infer<S[K]> } {
  const problems: string[] = [];
  const configs = schemas.map((schema) => {
    try {
      return loadConfig(schema, env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return undefined;
    }
  });
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);
  return configs as { -readonly [K in keyof S]: z.infer<S[K]> };
}
