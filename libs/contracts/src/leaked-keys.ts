import { z } from 'zod';

/** Decision 43: the most tokens one secret-scanning report may carry; a longer report is refused whole (413). */
export const SECRET_SCANNING_MAX_TOKENS = 1000;

/** One token of a secret-scanning report, in GitHub's partner format. Fields GitHub may add are accepted and ignored. */
export const secretScanningTokenSchema = z
  .looseObject({
    token: z.string().meta({ description: 'The string found; never stored, logged or echoed (its SHA-256 is answered)' }),
    type: z.string().meta({ description: 'The token type the provider registered, echoed as `token_type`' }),
    url: z.unknown().optional().meta({ description: 'Where it was found (not used)' }),
    source: z.unknown().optional().meta({ description: 'What kind of place it was found in (not used)' }),
  })
  .meta({ id: 'SecretScanningToken' });

/** POST /secret-scanning/github: GitHub's secret-scanning partner report, a JSON array. */
export const secretScanningReportSchema = z
  .array(secretScanningTokenSchema)
  .max(SECRET_SCANNING_MAX_TOKENS)
  .meta({ id: 'SecretScanningReport' });
export type SecretScanningReport = z.infer<typeof secretScanningReportSchema>;

/** The answer: one label per reported token, in the report's order. */
export const secretScanningLabelsSchema = z
  .array(
    z
      .object({
        token_hash: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .meta({ description: "The token's SHA-256, lowercase hex" }),
        token_type: z.string().meta({ description: 'The reported `type`' }),
        label: z.enum(['true_positive', 'false_positive']).meta({
          description:
            '`true_positive`: a key of this product that worked when reported (it works no more) or that an earlier report ended; `false_positive`: anything else',
        }),
      })
      .meta({ id: 'SecretScanningLabel' }),
  )
  .meta({ id: 'SecretScanningLabels' });
export type SecretScanningLabels = z.infer<typeof secretScanningLabelsSchema>;

/** POST /leaked-keys: one key found anywhere else. */
export const leakedKeyReportSchema = z
  .strictObject({ key: z.string().min(1).max(1024).meta({ description: 'The key as found' }) })
  .meta({ id: 'LeakedKeyReport' });
