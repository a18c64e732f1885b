import { isDocumented503, refusalName, type Outcome } from './http';

/** The run's clock and the phase it is in ("before outages", "kafka down", "after kafka", …). */
export class Timeline {
  startedAt = Date.now();
  phase = 'before outages';
  readonly phases: { name: string; fromMs: number }[] = [{ name: this.phase, fromMs: 0 }];

  /** Time zero: the traffic starts. */
  begin(): void {
    this.startedAt = Date.now();
  }

  elapsedMs(): number {
    return Date.now() - this.startedAt;
  }

  enter(phase: string): void {
    this.phase = phase;
    this.phases.push({ name: phase, fromMs: this.elapsedMs() });
  }
}

export interface KindStats {
  requests: number;
  ok: number;
  refused: Map<string, number>;
  documented503: number;
  /** Other 5xx, by status and code. */
  serverErrors: Map<string, number>;
  noAnswer: Map<string, number>;
  /** Every answer other than 2xx/3xx by its name, then by the phase it came in. */
  notOk: Map<string, Map<string, number>>;
  latenciesMs: number[];
}

export interface PhaseStats {
  requests: number;
  ok: number;
  refused: number;
  documented503: number;
  serverErrors: number;
  noAnswer: number;
}

/** One failed request, for the evidence section. */
export interface Failure {
  atMs: number;
  phase: string;
  kind: string;
  what: string;
  requestId?: string;
}

export const sum = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);

/** Every answer of the run, by request kind and by phase. */
export class Tally {
  readonly kinds = new Map<string, KindStats>();
  readonly byPhase = new Map<string, PhaseStats>();
  readonly failures: Failure[] = [];

  constructor(private readonly timeline: Timeline) {}

  record(kind: string, outcome: Outcome): void {
    const stats = this.kindStats(kind);
    const phase = this.phaseStats(this.timeline.phase);
    stats.requests += 1;
    phase.requests += 1;
    stats.latenciesMs.push(outcome.ms);
    const name = outcome.answered ? refusalName(outcome) : `no answer (${outcome.error})`;
    if (!outcome.answered || outcome.status >= 400) {
      const phases = stats.notOk.get(name) ?? new Map<string, number>();
      phases.set(this.timeline.phase, (phases.get(this.timeline.phase) ?? 0) + 1);
      stats.notOk.set(name, phases);
    }
    if (!outcome.answered) {
      stats.noAnswer.set(outcome.error, (stats.noAnswer.get(outcome.error) ?? 0) + 1);
      phase.noAnswer += 1;
      this.fail(kind, name);
    } else if (outcome.status < 400) {
      stats.ok += 1;
      phase.ok += 1;
    } else if (isDocumented503(outcome)) {
      stats.documented503 += 1;
      phase.documented503 += 1;
    } else if (outcome.status >= 500) {
      stats.serverErrors.set(name, (stats.serverErrors.get(name) ?? 0) + 1);
      phase.serverErrors += 1;
      const requestId = (outcome.body as { requestId?: unknown } | undefined)?.requestId;
      this.fail(kind, name, typeof requestId === 'string' ? requestId : undefined);
    } else {
      stats.refused.set(name, (stats.refused.get(name) ?? 0) + 1);
      phase.refused += 1;
    }
  }

  totals(): { requests: number; serverErrors: number; noAnswer: number; documented503: number } {
    const all = [...this.kinds.values()];
    return {
      requests: all.reduce((n, s) => n + s.requests, 0),
      serverErrors: all.reduce((n, s) => n + sum(s.serverErrors), 0),
      noAnswer: all.reduce((n, s) => n + sum(s.noAnswer), 0),
      documented503: all.reduce((n, s) => n + s.documented503, 0),
    };
  }

  private fail(kind: string, what: string, requestId?: string): void {
    this.failures.push({ atMs: this.timeline.elapsedMs(), phase: this.timeline.phase, kind, what, ...(requestId ? { requestId } : {}) });
  }

  private kindStats(kind: string): KindStats {
    let stats = this.kinds.get(kind);
    if (!stats) {
      stats = {
        requests: 0,
        ok: 0,
        refused: new Map(),
        documented503: 0,
        serverErrors: new Map(),
        noAnswer: new Map(),
        notOk: new Map(),
        latenciesMs: [],
      };
      this.kinds.set(kind, stats);
    }
    return stats;
  }

  private phaseStats(phase: string): PhaseStats {
    let stats = this.byPhase.get(phase);
    if (!stats) {
      stats = { requests: 0, ok: 0, refused: 0, documented503: 0, serverErrors: 0, noAnswer: 0 };
      this.byPhase.set(phase, stats);
    }
    return stats;
  }
}
