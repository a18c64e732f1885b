import { readFileSync } from 'node:fs';
import type { ServiceProcess } from './services';
import type { Timeline } from './tally';

const SAMPLE_EVERY_MS = 2_000;

/** A service's resident memory is flat when it ends within this share above its warm level. */
export const FLAT_GROWTH = 0.2;

export interface MemoryRow {
  service: string;
  pid: number;
  warmMb: number;
  endMb: number;
  peakMb: number;
  growth: number;
}

function rssKb(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

/**
 * Samples each service's RSS (/proc/<pid>/status) every 2 s. Single samples swing with garbage
 * collection, so the levels compared are medians over a window: right after warm-up, and at the end.
 */
export class MemorySampler {
  private readonly samples = new Map<ServiceProcess, { atMs: number; kb: number }[]>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly services: ServiceProcess[],
    private readonly timeline: Timeline,
  ) {
    for (const service of services) this.samples.set(service, []);
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
    this.sample();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Warm: the median over [warmUpMs, warmUpMs + windowMs]; end: the median over the last windowMs before `endMs`. */
  rows(warmUpMs: number, windowMs: number, endMs: number): MemoryRow[] {
    return this.services.map((service) => {
      const all = this.samples.get(service) ?? [];
      const within = (from: number, to: number) => all.filter((s) => s.atMs >= from && s.atMs <= to).map((s) => s.kb / 1024);
      const warmMb = median(within(warmUpMs, warmUpMs + windowMs));
      const endMb = median(within(endMs - windowMs, endMs));
      return {
        service: service.name,
        pid: service.pid,
        warmMb,
        endMb,
        peakMb: Math.max(...all.map((s) => s.kb / 1024)),
        growth: endMb / warmMb - 1,
      };
    });
  }

  private sample(): void {
    const atMs = this.timeline.elapsedMs();
    for (const service of this.services) {
      const kb = rssKb(service.pid);
      if (kb !== undefined) this.samples.get(service)!.push({ atMs, kb });
    }
  }
}
