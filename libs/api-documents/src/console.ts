import { buildOpenApiDocument, ed25519KeySetSchema, errorResponse as error, textHeader as text } from '@rsd/platform';
import { withExamples } from './examples';
import { PRODUCT_VERSION } from './product';

/** The console's public keys: Ed25519 JWKs. */
const consoleKeysSchema = ed25519KeySetSchema('ConsoleKeySet', "The public keys that verify the console's tokens");

/**
 * The console's one machine-readable part (decision 51): the keys the credentials service and the
 * notifier verify its tokens with. Its pages (`/console`, `/claim/{token}`) are for people and
 * described in docs/organizations/console.md; the claim API a program uses is the credentials service's.
 */
export function consoleOpenApi(): object {
  return withExamples(
    buildOpenApiDocument(
      {
        title: 'Resilience Score Console',
        version: PRODUCT_VERSION,
        description:
          'The console for organizations and the claim pages for recipients. It is a client of the credentials service and the ' +
          'notifier: every change it makes for a signed-in person goes through their APIs with a token of its own key (EdDSA, ' +
          'at most a minute, naming the person), verified with the public keys below.',
      },
      [
        {
          method: 'get',
          path: '/.well-known/jwks.json',
          operationId: 'getConsoleKeys',
          servers: [{ url: '/' }],
          summary: "The keys that verify the console's tokens",
          description:
            'Public; may be cached for 5 minutes. The credentials service and the notifier read it (CONSOLE_JWKS_URL) to accept ' +
            "the console's tokens, and nothing else.",
          tags: ['Keys'],
          security: 'public',
          responses: {
            '200': {
              description: 'The public keys',
              schema: consoleKeysSchema,
              headers: { 'Cache-Control': text('`public, max-age=300`') },
            },
            '405': error('METHOD_NOT_ALLOWED: only GET and HEAD'),
          },
        },
      ],
    ),
  );
}
