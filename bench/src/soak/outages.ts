import { setTimeout as sleep } from 'node:timers/promises';
import type { InfraInstance, Server } from './infra-instance';
import type { Timeline } from './tally';

export interface Outage {
  server: Server;
  /** The timeline's phase while it is down. */
  phase: string;
  /** Elapsed run time when the stop began, and how long until the server answered again. */
  atMs: number;
  downMs?: number;
}

/** Kafka, the MongoDB-wire server and Redis, one after another, at a quarter, half and three quarters of the run. */
export const OUTAGE_PLAN: readonly { server: Server; at: number }[] = [
  { server: 'kafka', at: 0.25 },
  { server: 'mongo', at: 0.5 },
  { server: 'redis', at: 0.75 },
];

const LABEL: Record<Server, string> = { kafka: 'kafka', mongo: 'mongo (FerretDB)', redis: 'redis' };

/**
 * Stops each server with infra.sh (its data kept, as in a real outage), leaves it down for
 * `pauseMs`, and starts it again; the timeline's phase says which one is down. An abort skips the
 * outages not yet begun and the restart of one under way, so no server comes back after cleanup.
 */
export async function runOutages(
  infra: InfraInstance,
  timeline: Timeline,
  runMs: number,
  pauseMs: number,
  signal: AbortSignal,
): Promise<Outage[]> {
  const done: Outage[] = [];
  for (const { server, at } of OUTAGE_PLAN) {
    const wait = at * runMs - timeline.elapsedMs();
    try {
      if (wait > 0) await sleep(wait, undefined, { signal });
    } catch {
      break;
    }
    const outage: Outage = { server, phase: `${LABEL[server]} down`, atMs: timeline.elapsedMs() };
    done.push(outage);
    timeline.enter(outage.phase);
    await infra.run('stop', [server]);
    try {
      await sleep(pauseMs, undefined, { signal });
    } catch {
      break; // cleanup takes the whole instance down
    }
    await infra.run('up', [server]);
    outage.downMs = timeline.elapsedMs() - outage.atMs;
    timeline.enter(`after ${LABEL[server]}`);
  }
  return done;
}
