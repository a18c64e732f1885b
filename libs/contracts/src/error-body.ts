import { z } from 'zod';

export const errorBodySchema = z
  .object({
    error: z.string().meta({ description: 'HTTP reason phrase, e.g. "Unauthorized"', example: 'Unauthorized' }),
    code: z
      .string()
      .optional()
      .meta({ description: 'Machine-readable code; absent on 403 from the edge policy and on 429', example: 'INVALID_API_KEY' }),
    message: z.string().meta({ description: 'Human-readable text' }),
    timestamp: z.iso.datetime({ precision: 3 }).meta({ description: 'ISO 8601 UTC timestamp' }),
    requestId: z.string().optional().meta({ description: 'Echo of x-request-id, or one the service made' }),
    details: z
      .array(z.object({ path: z.string(), message: z.string(), index: z.int().optional() }))
      .optional()
      .meta({ description: 'Per-field problems, on validation errors only' }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof errorBodySchema>;
