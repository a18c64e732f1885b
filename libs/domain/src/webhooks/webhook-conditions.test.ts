import type { CalculatedScore, Grade } from '@rsd/contracts';
import { conditionsHold } from './webhook-conditions';

const scoreOf = (score: number, grade: Grade): CalculatedScore => ({
  organizationId: 'acme',
  scoreDate: '2026-11-20',
  score,
  grade,
  pillarScores: { structuralIntegrity: 70, failureResistance: 70, deviceHealth: 70, recoveryCapability: 70 },
  calculatedAt: '2026-11-20T06:00:00.000Z',
});

// The sequence: 72, 65, 58, 59, 40, the grade changing at 58 and at 40.
const SEQUENCE = [
  scoreOf(72, 'Strengthen'),
  scoreOf(65, 'Strengthen'),
  scoreOf(58, 'Improve'),
  scoreOf(59, 'Improve'),
  scoreOf(40, 'Prioritize'),
];
const firedAt = (conditions: Parameters<typeof conditionsHold>[0]) =>
  SEQUENCE.filter((latest, index) => conditionsHold(conditions, SEQUENCE[index - 1], latest)).map((latest) => latest.score);

describe('conditionsHold (decision 45)', () => {
  test.each([
    ['no conditions', undefined, [72, 65, 58, 59, 40]],
    ['{}', {}, [72, 65, 58, 59, 40]],
    ['scoreBelow 60', { scoreBelow: 60 }, [58, 59, 40]],
    ['scoreBelow 58 (strictly below)', { scoreBelow: 58 }, [40]],
    ['scoreDropAtLeast 7 (the first has nothing to drop from)', { scoreDropAtLeast: 7 }, [65, 58, 40]],
    ['scoreDropAtLeast 8', { scoreDropAtLeast: 8 }, [40]],
    ['gradeChanged', { gradeChanged: true as const }, [58, 40]],
    ['scoreBelow 60 or scoreDropAtLeast 7', { scoreBelow: 60, scoreDropAtLeast: 7 }, [65, 58, 59, 40]],
    ['scoreBelow 50 or gradeChanged', { scoreBelow: 50, gradeChanged: true as const }, [58, 40]],
  ])('when the conditions are %s, then across 72, 65, 58, 59, 40 they hold exactly at %j', (_name, conditions, expected) => {
    expect(firedAt(conditions)).toEqual(expected);
  });

  test('when a score rises, then a drop condition does not hold, however large the rise', () => {
    expect(conditionsHold({ scoreDropAtLeast: 1 }, scoreOf(40, 'Prioritize'), scoreOf(90, 'Sustain'))).toBe(false);
  });
});
