import { createsWhileReading, type CreateStallRequest } from './create-stall';

/**
 * The creates-while-reading client as a process of its own (create-stall.ts forks it): the bench's
 * process has just built the data set, and its collector's pauses (mark-compacts of 20–30 ms right
 * after a 20k build, measured with a GC observer) landed inside the half second the creates take,
 * and counted against every create in flight. A recipient's client is a process of its own, too.
 */
/** Answers once, then lets the process end: the parent reads the answer at its exit. */
const reply = (answer: object) => process.send?.(answer, () => process.disconnect?.());

process.once('message', (request: CreateStallRequest) => {
  createsWhileReading(request.urls, request.organizationId, request.token, request.reader, request.budgetMs).then(
    (figures) => reply({ figures }),
    (error: unknown) => reply({ failed: error instanceof Error ? error.message : String(error) }),
  );
});
