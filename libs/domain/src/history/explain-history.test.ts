import type { CalculatedScore, Grade, PillarScores } from '@rsd/contracts';
import { explainHistory } from './explain-history';

function aSnapshot(scoreDate: string, score: number, grade: Grade, pillars: [number, number, number, number]): CalculatedScore {
  const [structuralIntegrity, failureResistance, deviceHealth, recoveryCapability] = pillars;
  const pillarScores: PillarScores = { structuralIntegrity, failureResistance, deviceHealth, recoveryCapability };
  return { organizationId: 'acme', scoreDate, score, grade, pillarScores, calculatedAt: `${scoreDate}T06:00:00.000Z` };
}

const newest = aSnapshot('2026-11-22', 71, 'Strengthen', [80, 62, 75, 67]);
const middle = aSnapshot('2026-11-21', 64, 'Improve', [80, 70, 60, 46]);
const oldest = aSnapshot('2026-11-20', 64, 'Improve', [80, 70, 60, 46]);

describe('explainHistory (decision 25)', () => {
  it('when pillar data is allowed, then each change holds the deltas and the driver, computed by hand here', () => {
    const [first, second, third] = explainHistory([newest, middle, oldest], undefined, { withPillars: true });

    // 71 - 64 = 7; pillars 0, -8, +15, +21: the largest absolute change is recoveryCapability (21).
    expect(first).toEqual({
      scoreDate: '2026-11-22',
      score: 71,
      grade: 'Strengthen',
      pillarScores: newest.pillarScores,
      change: {
        score: 7,
        grade: { from: 'Improve', to: 'Strengthen' },
        pillars: { structuralIntegrity: 0, failureResistance: -8, deviceHealth: 15, recoveryCapability: 21 },
        driver: 'recoveryCapability',
      },
    });
    // Nothing moved: no grade change and no driver.
    expect(second?.change).toEqual({
      score: 0,
      grade: null,
      pillars: { structuralIntegrity: 0, failureResistance: 0, deviceHealth: 0, recoveryCapability: 0 },
      driver: null,
    });
    // The oldest snapshot there is has nothing to compare with.
    expect(third?.change).toBeNull();
  });

  it('when pillar data is not allowed, then no item carries pillar scores, pillar deltas or a driver', () => {
    const items = explainHistory([newest, middle], oldest, { withPillars: false });

    expect(items).toEqual([
      { scoreDate: '2026-11-22', score: 71, grade: 'Strengthen', change: { score: 7, grade: { from: 'Improve', to: 'Strengthen' } } },
      { scoreDate: '2026-11-21', score: 64, grade: 'Improve', change: { score: 0, grade: null } },
    ]);
  });

  it('when the page ends before the oldest snapshot, then its last item is compared with the snapshot just older', () => {
    const [only] = explainHistory([middle], aSnapshot('2026-11-01', 90, 'Sustain', [90, 90, 90, 90]), { withPillars: true });

    // 64 - 90 = -26; pillars -10, -20, -30, -44: recoveryCapability drives it.
    expect(only?.change).toEqual({
      score: -26,
      grade: { from: 'Sustain', to: 'Improve' },
      pillars: { structuralIntegrity: -10, failureResistance: -20, deviceHealth: -30, recoveryCapability: -44 },
      driver: 'recoveryCapability',
    });
  });

  it('when two pillars tie for the largest change, then the first in the specification order drives', () => {
    const [item] = explainHistory(
      [aSnapshot('2026-11-02', 50, 'Improve', [55, 45, 50, 50])],
      aSnapshot('2026-11-01', 50, 'Improve', [50, 50, 50, 50]),
      {
        withPillars: true,
      },
    );

    expect(item?.change?.driver).toBe('structuralIntegrity');
  });
});
