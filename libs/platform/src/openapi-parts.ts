import { z } from 'zod';
import { clientIdPattern, errorBodySchema } from '@rsd/contracts';
import type { OpenApiHeader, OpenApiResponse } from './api-docs';

/** An error answer: the product's one error body, with the headers that status carries. */
export const errorResponse = (description: string, headers?: Record<string, OpenApiHeader>): OpenApiResponse => ({
  description,
  schema: errorBodySchema,
  ...(headers ? { headers } : {}),
});

/** A header whose value is a plain string. */
export const textHeader = (description: string, required = true): OpenApiHeader => ({ description, required, schema: { type: 'string' } });

/** A parameter of an operation: a string unless `schema` says; one in the path is required, others not unless `required`. */
export const operationParameter = (
  place: 'path' | 'query' | 'header',
  name: string,
  description: string,
  schema: object = { type: 'string' },
  required = place === 'path',
) => ({ name, in: place, required, description, schema });

/** The recipient's Client ID in the path, with the pattern of the deployment's prefix. */
export const clientIdPathParameter = (prefix: string) =>
  operationParameter('path', 'clientId', `The Client ID exactly as issued: ${prefix}_ then 16 to 64 letters or digits`, {
    type: 'string',
    pattern: clientIdPattern(prefix).source,
  });

/** `limit` and `cursor`, the query of every paged list: the same rules and errors wherever a list is paged. */
export const pageParameters = (limit: { min: number; max: number; default: number }, perPage: string): object[] => [
  {
    name: 'limit',
    in: 'query',
    required: false,
    description: `${perPage}; INVALID_PARAMETER (400) outside the range or not written as a plain whole number`,
    schema: { type: 'integer', minimum: limit.min, maximum: limit.max, default: limit.default },
  },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'The `nextCursor` of the previous page, unchanged; anything else is INVALID_PARAMETER (400)',
    schema: { type: 'string' },
  },
];

/** A published set of Ed25519 public keys (the read API's response signing keys, the console's token keys). */
export const ed25519KeySetSchema = (id: string, description: string) =>
  z
    .object({
      keys: z.array(
        z.object({
          kty: z.literal('OKP'),
          crv: z.literal('Ed25519'),
          x: z.string(),
          kid: z.string(),
          alg: z.literal('EdDSA'),
          use: z.literal('sig'),
        }),
      ),
    })
    .meta({ id, description });
