import type { ScoreCalculated } from '@rsd/contracts';
import type { ScoreViews } from '@rsd/ports';

/** A calculated score into the score views, which decide whether it becomes the latest or history only. */
export async function projectScoreEvent(scores: ScoreViews, event: ScoreCalculated): Promise<void> {
  await scores.record(event.data);
}
