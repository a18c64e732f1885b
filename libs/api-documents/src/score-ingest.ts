import { z } from 'zod';
import { MAX_SCORES_PER_BATCH, scoreBatchSchema, scoresAcceptedSchema, scoreSubmissionSchema } from '@rsd/contracts';
import { buildOpenApiDocument, errorResponse as error } from '@rsd/platform';
import { withExamples } from './examples';
import { PRODUCT_VERSION } from './product';

/** Registered under its own id so the document refers to the components instead of inlining them. */
const scoreRequestSchema = z
  .union([scoreSubmissionSchema, scoreBatchSchema])
  .meta({ id: 'ScoreSubmissionOrBatch', description: 'One score, or a batch of 1 to 1000 scores' });

export function scoreIngestOpenApi(): object {
  return withExamples(
    buildOpenApiDocument(
      {
        title: 'Resilience Score Ingest API',
        version: PRODUCT_VERSION,
        description:
          'Where the upstream scoring engine delivers calculated scores. Callers authenticate with a bearer JWT ' +
          'whose `scope` includes `scores:write`.',
      },
      [
        {
          method: 'post',
          path: '/scores',
          operationId: 'submitScores',
          summary: 'Submit one score or a batch of scores',
          description:
            `One score, or \`{ "scores": [...] }\` with 1 to ${MAX_SCORES_PER_BATCH} of them. A batch is validated whole: ` +
            "if any item is invalid, the 400 lists every problem with the item's `index` and nothing is accepted. " +
            "A `scoreDate` after today (UTC) and a `calculatedAt` more than 5 minutes ahead of the service's clock " +
            'are refused with 400 although the schema allows them (it cannot depend on the date). A token that names an ' +
            "organization (`org` claim) may submit only that organization's scores (403 otherwise); a scoring engine's " +
            'token has no `org` claim. `calculatedAt` defaults to the time of receipt. 202 is answered only once every ' +
            'score is durably in the event log.',
          tags: ['Scores'],
          security: 'bearer',
          requestBody: scoreRequestSchema,
          responses: {
            '202': { description: 'Accepted: every score is durably in the event log', schema: scoresAcceptedSchema },
            '400': error(
              'MALFORMED_JSON, or VALIDATION_FAILED with `details` (`path`, `message`, and `index` for batch items), a `scoreDate` after today or a `calculatedAt` too far ahead included',
            ),
            '401': error('INVALID_TOKEN: the bearer token is missing, malformed, expired or not signed by a trusted key', {
              'WWW-Authenticate': { description: '`Bearer`', required: true, schema: { type: 'string' } },
            }),
            '403': error(
              'INSUFFICIENT_SCOPE: the token lacks scores:write; FORBIDDEN_ORGANIZATION: the token names an organization (`org` claim) and a score, or any item of a batch, is for another one; nothing is accepted',
            ),
            '413': error('PAYLOAD_TOO_LARGE: the body is over the configured limit (2 MB by default)'),
            '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
            '503': error('SERVICE_UNAVAILABLE: the event log could not be written; nothing was accepted'),
          },
        },
      ],
    ),
  );
}
