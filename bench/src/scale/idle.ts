import { cpuMsOf, memoryOf } from './proc-stats';
import { sleep } from './percentiles';

export interface IdleFigures {
  /** VmRSS 2 s after the ready line, nothing asked of the process meanwhile. */
  rssMb: number;
  /** VmHWM at the same moment: the most the start itself needed (replay, import, projection). */
  peakMb: number;
  /** User + system CPU over the next 10 s without a request, as % of one core: timers, scans, flushes. */
  cpuPercent: number;
}

const SETTLE_MS = 2_000;
const IDLE_MS = 10_000;

export async function idleFigures(pid: number): Promise<IdleFigures> {
  await sleep(SETTLE_MS);
  const { rssMb, peakMb } = await memoryOf(pid);
  const cpuBefore = await cpuMsOf(pid);
  const from = performance.now();
  await sleep(IDLE_MS);
  const cpuPercent = (((await cpuMsOf(pid)) - cpuBefore) / (performance.now() - from)) * 100;
  return { rssMb, peakMb, cpuPercent };
}
