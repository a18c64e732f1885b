import type { CalculatedScore, Grade, PillarScores } from '@rsd/contracts';

export type PillarName = keyof PillarScores;

/** In the order the specification lists them; it breaks ties for the driver. */
export const PILLAR_NAMES: readonly PillarName[] = ['structuralIntegrity', 'failureResistance', 'deviceHealth', 'recoveryCapability'];

/** Why a snapshot differs from the next older one (decision 25). */
export interface Change {
  score: number;
  grade: { from: Grade; to: Grade } | null;
  /** Only with the pillar_breakdown scope. */
  pillars?: Record<PillarName, number>;
  /** The pillar with the largest absolute change (the first listed on a tie), null when none changed; only with pillars. */
  driver?: PillarName | null;
}

export interface HistoryItem {
  scoreDate: string;
  score: number;
  grade: Grade;
  pillarScores?: PillarScores;
  /** null only for the oldest snapshot there is. */
  change: Change | null;
}

/**
 * The items of one history page, newest first. `olderThanPage` is the snapshot just older than the
 * page's last one (even if it falls outside the requested range), so every item but the very
 * oldest snapshot has a change.
 */
export function explainHistory(
  page: readonly CalculatedScore[],
  olderThanPage: CalculatedScore | undefined,
  options: { withPillars: boolean },
): HistoryItem[] {
  return page.map((snapshot, index) => {
    const previous = page[index + 1] ?? olderThanPage;
    const item: HistoryItem = { scoreDate: snapshot.scoreDate, score: snapshot.score, grade: snapshot.grade, change: null };
    if (options.withPillars) item.pillarScores = snapshot.pillarScores;
    if (previous) item.change = changeBetween(previous, snapshot, options.withPillars);
    return item;
  });
}

export function changeBetween(older: CalculatedScore, newer: CalculatedScore, withPillars: boolean): Change {
  const change: Change = {
    score: newer.score - older.score,
    grade: newer.grade === older.grade ? null : { from: older.grade, to: newer.grade },
  };
  if (!withPillars) return change;
  const pillars = Object.fromEntries(PILLAR_NAMES.map((name) => [name, newer.pillarScores[name] - older.pillarScores[name]])) as Record<
    PillarName,
    number
  >;
  let driver: PillarName | null = null;
  for (const name of PILLAR_NAMES) {
    if (pillars[name] !== 0 && (driver === null || Math.abs(pillars[name]) > Math.abs(pillars[driver]))) driver = name;
  }
  return { ...change, pillars, driver };
}
