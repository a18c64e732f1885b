import { ApiError } from '@rsd/platform';
import { aScoreSubmission, thrownBy } from '@rsd/testkit';
import { MAX_CLOCK_SKEW_MS, validateScoreSubmission } from './score-submission-request';

const NOW = new Date('2026-11-20T23:59:00.000Z');

const detailsOf = (body: unknown): unknown => thrownBy(() => validateScoreSubmission(body, NOW), ApiError).details;

describe('score submission', () => {
  test('when one score comes without calculatedAt, then receipt time stands in for it', () => {
    expect(validateScoreSubmission(aScoreSubmission(), NOW)).toEqual([{ ...aScoreSubmission(), calculatedAt: NOW.toISOString() }]);
  });

  test('when calculatedAt is slightly ahead of our clock, then it is accepted as sent', () => {
    const calculatedAt = new Date(NOW.getTime() + MAX_CLOCK_SKEW_MS).toISOString();

    expect(validateScoreSubmission(aScoreSubmission({ calculatedAt }), NOW)[0]?.calculatedAt).toBe(calculatedAt);
  });

  test('when calculatedAt is further ahead than the allowed skew, then it is refused', () => {
    const calculatedAt = new Date(NOW.getTime() + MAX_CLOCK_SKEW_MS + 1).toISOString();

    expect(detailsOf(aScoreSubmission({ calculatedAt }))).toEqual([{ path: 'calculatedAt', message: 'must not be in the future' }]);
  });

  test('when a batch item is dated tomorrow, then the problem carries the item index', () => {
    const body = { scores: [aScoreSubmission(), aScoreSubmission({ scoreDate: '2026-11-21' })] };

    expect(detailsOf(body)).toEqual([{ index: 1, path: 'scores.1.scoreDate', message: 'must not be after today (2026-11-20, UTC)' }]);
  });

  test('when a batch item is not an object, then it is reported by index', () => {
    expect(detailsOf({ scores: [aScoreSubmission(), 'score'] })).toEqual([{ index: 1, path: 'scores.1', message: expect.any(String) }]);
  });

  test('when the batch object has other fields, then they are reported and nothing is accepted', () => {
    expect(detailsOf({ scores: [aScoreSubmission()], source: 'engine' })).toEqual([{ path: 'source', message: 'is not a known field' }]);
  });

  test('when a single score misses fields, then each is reported as required without an index', () => {
    const { grade: _grade, score: _score, ...rest } = aScoreSubmission();

    expect(detailsOf(rest)).toEqual([
      { path: 'score', message: 'is required' },
      { path: 'grade', message: 'is required' },
    ]);
  });

  test.each([null, [], 'score', 42])('when the body is %p, then the body itself is reported', (body) => {
    expect(detailsOf(body)).toEqual([{ path: '', message: expect.any(String) }]);
  });
});
