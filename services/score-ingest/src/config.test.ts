import { loadConfig } from '@rsd/platform';
import { scoreIngestConfigSchema } from './config';

const SECRET = 'test-secret-that-is-at-least-32-characters-long';

describe('score-ingest config', () => {
  test('when only the token secret is set, then every other variable has its default', () => {
    expect(loadConfig(scoreIngestConfigSchema, { JWT_HS256_SECRET: SECRET })).toEqual({
      SCORE_INGEST_PORT: 8082,
      SCORE_INGEST_HOST: '0.0.0.0',
      SCORE_INGEST_BODY_LIMIT: '2mb',
      LOG_LEVEL: 'info',
      JWT_HS256_SECRET: SECRET,
    });
  });

  test('when the body limit is not a size, then it is refused by name', () => {
    expect(() => loadConfig(scoreIngestConfigSchema, { JWT_HS256_SECRET: SECRET, SCORE_INGEST_BODY_LIMIT: 'big' })).toThrow(
      /SCORE_INGEST_BODY_LIMIT/,
    );
  });
});
