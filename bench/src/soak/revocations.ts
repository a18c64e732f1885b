import { call, codeOf, isDocumented503, limiterOf, type Outcome } from './http';
import type { Tally, Timeline } from './tally';

export interface Credential {
  clientId: string;
  apiKey: string;
  organizationId: string;
}

/** `confirmed`: the revoke answered 200. `pending`: 202 with `"enforcement": "pending"` (decision 29). */
export type Enforcement = 'confirmed' | 'pending';

/** Decision 29: within 1 s of a 200; a 202 may be outlived up to the replicas' staleness bound. */
export const CONFIRMED_BOUND_MS = 1_000;

/** Probes after the bound: at it, then these later, so a key accepted again later is caught too. */
const PROBE_OFFSETS_MS = [0, 5_000, 30_000];
const RETRY_MS = 1_000;
const INCONCLUSIVE_RETRIES = 5;

interface Revocation {
  credential: Credential;
  enforcement: Enforcement;
  /** Epoch ms after which no replica may accept the key. */
  deadline: number;
}

export interface Outlived {
  clientId: string;
  enforcement: Enforcement;
  replica: string;
  /** Elapsed run time of the deadline, of the last answer that accepted the key, and of the first refusal after it. */
  deadlineAtMs: number;
  lastAcceptedAtMs: number;
  refusedAtMs?: number;
  answers: Set<string>;
}

type Verdict = 'accepted' | 'refused' | 'inconclusive';

/**
 * Whether a replica still let the key in. Past authentication a request may still miss its data or
 * its scope: those answers, and the per-credential 429, mean the key was accepted.
 */
export function verdictOf(outcome: Outcome): Verdict {
  if (!outcome.answered) return 'inconclusive';
  if (isDocumented503(outcome)) return 'refused';
  if (outcome.status >= 500) return 'inconclusive';
  if (outcome.status < 300) return 'accepted';
  if (outcome.status === 429) return limiterOf(outcome) === 'credential' ? 'accepted' : 'refused';
  const code = codeOf(outcome);
  const pastAuthentication = ['SCORE_NOT_FOUND', 'PILLARS_NOT_FOUND', 'INSUFFICIENT_SCOPE', 'ADDRESS_NOT_ALLOWED'];
  return code !== undefined && pastAuthentication.includes(code) ? 'accepted' : 'refused';
}

/** Probes every revoked key on every replica once its bound has passed, and follows any that is still accepted. */
export class RevocationWatch {
  readonly counts: Record<Enforcement, number> = { confirmed: 0, pending: 0 };
  readonly outlived = new Map<string, Outlived>();
  private readonly revocations: Revocation[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly deps: { readApis: string[]; tally: Tally; timeline: Timeline; stalenessBoundMs: number }) {}

  watch(credential: Credential, enforcement: Enforcement, answeredAt = Date.now()): void {
    const revocation: Revocation = {
      credential,
      enforcement,
      deadline: answeredAt + (enforcement === 'confirmed' ? CONFIRMED_BOUND_MS : this.deps.stalenessBoundMs),
    };
    this.revocations.push(revocation);
    this.counts[enforcement] += 1;
    for (const offset of PROBE_OFFSETS_MS) {
      this.schedule(revocation.deadline + offset - Date.now(), () => this.probeEverywhere(revocation));
    }
  }

  /** Waits for every bound to pass, then probes every revoked key on every replica once more. */
  async finish(): Promise<void> {
    const last = Math.max(0, ...this.revocations.map((r) => r.deadline));
    await new Promise((done) => setTimeout(done, Math.max(0, last - Date.now())));
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    await Promise.all(this.inFlight);
    const queue = [...this.revocations];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await this.probeEverywhere(next);
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  }

  /** Distinct revocations that some replica outlived, and the longest overrun seen (a lower bound). */
  summary(): { revocations: number; outlived: number; maxOverrunMs: number; stillAcceptedAtEnd: number } {
    const entries = [...this.outlived.values()];
    return {
      revocations: this.revocations.length,
      outlived: new Set(entries.map((o) => o.clientId)).size,
      maxOverrunMs: Math.max(0, ...entries.map((o) => o.lastAcceptedAtMs - o.deadlineAtMs)),
      stillAcceptedAtEnd: entries.filter((o) => o.refusedAtMs === undefined).length,
    };
  }

  private schedule(delayMs: number, task: () => Promise<void>): void {
    if (this.stopped) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        const running = task();
        this.inFlight.add(running);
        void running.finally(() => this.inFlight.delete(running));
      },
      Math.max(0, delayMs),
    );
    this.timers.add(timer);
  }

  private async probeEverywhere(revocation: Revocation): Promise<void> {
    await Promise.all(this.deps.readApis.map((replica) => this.probe(revocation, replica, 0)));
  }

  private async probe(revocation: Revocation, replica: string, retries: number): Promise<void> {
    const { clientId, apiKey } = revocation.credential;
    const outcome = await call(`${replica}/v1/customers/${clientId}/score`, { headers: { 'x-api-key': apiKey } });
    this.deps.tally.record('probe revoked key', outcome);
    const verdict = verdictOf(outcome);
    const key = `${clientId} ${replica}`;
    const known = this.outlived.get(key);
    const now = this.deps.timeline.elapsedMs();
    if (verdict === 'accepted' && Date.now() >= revocation.deadline) {
      const answer = outcome.answered ? String(outcome.status) : '';
      if (known) {
        known.lastAcceptedAtMs = now;
        known.answers.add(answer);
        delete known.refusedAtMs;
      } else {
        this.outlived.set(key, {
          clientId,
          enforcement: revocation.enforcement,
          replica,
          deadlineAtMs: revocation.deadline - this.deps.timeline.startedAt,
          lastAcceptedAtMs: now,
          answers: new Set([answer]),
        });
      }
      // Follow it until the replica refuses, to measure how long it was outlived.
      this.schedule(RETRY_MS, () => this.probe(revocation, replica, 0));
    } else if (verdict === 'refused' && known && known.refusedAtMs === undefined) {
      known.refusedAtMs = now;
    } else if (verdict === 'inconclusive' && retries < INCONCLUSIVE_RETRIES) {
      this.schedule(RETRY_MS, () => this.probe(revocation, replica, retries + 1));
    }
  }
}
