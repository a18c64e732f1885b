// The creates-while-reading client as a process of its own (create-stall.ts forks one a round). The
// bench's process has just built the data set, and its collector's pauses (mark-compacts after a
// build) would land inside the round and count against every create in flight. A recipient's
// client is a process of its own, too.
import { createsWhileReading, type CreateStallRequest } from './create-stall';

/** Answers once, then lets the process end: the parent reads the answer at its exit. */
const reply = (answer: object) => process.send?.(answer, () => process.disconnect?.());

process.once('message', (request: CreateStallRequest) => {
  createsWhileReading(request).then(
    (figures) => reply({ figures }),
    (error: unknown) => reply({ failed: error instanceof Error ? error.message : String(error) }),
  );
});
