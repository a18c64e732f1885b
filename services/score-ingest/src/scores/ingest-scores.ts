import { TOPICS, type ScoreCalculated } from '@rsd/contracts';
import { ApiError, serviceUnavailable, type Logger, UnavailableError } from '@rsd/platform';
import type { Clock, EventLog } from '@rsd/ports';
import { recordOf, scoreCalculated } from './score-events';
import { validateScoreSubmission } from './score-submission-request';

export interface IngestDeps {
  eventLog: EventLog;
  clock: Clock;
  log: Logger;
  newEventId(): string;
}

/**
 * Resolves to the number of scores accepted, only once all of them are durably in the event log.
 * `callerOrganization` is the token's `org` claim: such a token submits that organization's scores
 * alone (decision 34); a scoring engine's token has none and submits for any organization.
 */
export async function ingestScores(deps: IngestDeps, body: unknown, callerOrganization: string | undefined): Promise<number> {
  const receivedAt = deps.clock.now();
  const scores = validateScoreSubmission(body, receivedAt);
  assertCallerMaySubmit(scores, callerOrganization);
  const events = scores.map((score) => scoreCalculated(score, { id: deps.newEventId(), time: receivedAt }));
  await appendAllOrNothing(deps, events);
  return events.length;
}

/** The whole request is refused, nothing emitted, if any item belongs to an organization the token does not name. */
function assertCallerMaySubmit(scores: readonly { organizationId: string }[], callerOrganization: string | undefined): void {
  if (callerOrganization === undefined) return;
  const foreign = scores.findIndex((score) => score.organizationId !== callerOrganization);
  if (foreign !== -1) {
    throw new ApiError(
      'FORBIDDEN_ORGANIZATION',
      `The token acts for organization ${callerOrganization} alone; score ${foreign} is for another organization, so nothing was accepted`,
    );
  }
}

/** One append for the whole request: the embedded log writes it all or nothing, and so must our answer. */
async function appendAllOrNothing(deps: IngestDeps, events: ScoreCalculated[]): Promise<void> {
  try {
    await deps.eventLog.append(TOPICS.scores, events.map(recordOf));
  } catch (error) {
    // Only an outage is a 503; anything else is a defect, answered 500 and logged as one.
    if (!(error instanceof UnavailableError)) throw error;
    deps.log.error({ err: error, scores: events.length }, 'event log append failed; the request was refused');
    throw serviceUnavailable('The event log is unavailable, so nothing was accepted; retry later');
  }
}
