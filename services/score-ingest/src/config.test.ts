import { loadConfig } from '@rsd/platform';
import { TEST_JWT_SECRET } from '@rsd/testkit';
import { scoreIngestConfigSchema } from './config';

describe('score-ingest config', () => {
  test('when only the token secret is set, then every other variable has its default', () => {
    expect(loadConfig(scoreIngestConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET })).toEqual({
      SCORE_INGEST_PORT: 8082,
      SCORE_INGEST_HOST: '0.0.0.0',
      SCORE_INGEST_BODY_LIMIT: '2mb',
      LOG_LEVEL: 'info',
      JWT_HS256_SECRET: TEST_JWT_SECRET,
    });
  });

  test('when the body limit is not a size, then it is refused by name', () => {
    expect(() => loadConfig(scoreIngestConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET, SCORE_INGEST_BODY_LIMIT: 'big' })).toThrow(
      /SCORE_INGEST_BODY_LIMIT/,
    );
  });
});
