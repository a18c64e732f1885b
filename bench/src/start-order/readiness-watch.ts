import { setTimeout as sleep } from 'node:timers/promises';

export interface Transition {
  at: number;
  ready: boolean;
}

const POLL_EVERY_MS = 200;
const REQUEST_TIMEOUT_MS = 3_000;

/**
 * Polls one process's /readyz without pause and keeps every change of its answer, so a run can
 * ask afterwards when it became ready, when it stopped being ready, and when it came back.
 */
export class ReadinessWatch {
  readonly transitions: Transition[] = [];
  /** The first /readyz body that was not a 200 (to check its shape while starting). */
  firstNotReadyBody: unknown;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(readonly url: string) {
    this.loop = this.poll();
  }

  get ready(): boolean {
    return this.transitions.at(-1)?.ready ?? false;
  }

  /** Since when the answer has been 200 without a break; undefined while it is not. */
  readySince(): number | undefined {
    const last = this.transitions.at(-1);
    return last?.ready ? last.at : undefined;
  }

  /** The first time after `since` at which the answer became `ready` (or was already, if it never changed since). */
  firstAt(ready: boolean, since: number): number | undefined {
    const before = this.transitions.filter((t) => t.at <= since).at(-1);
    if (before?.ready === ready) return since;
    return this.transitions.find((t) => t.at > since && t.ready === ready)?.at;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async poll(): Promise<void> {
    while (this.running) {
      const at = Date.now();
      const ready = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(
        async (response) => {
          if (response.status !== 200 && this.firstNotReadyBody === undefined) {
            this.firstNotReadyBody = await response.json().catch(() => null);
          } else {
            await response.arrayBuffer();
          }
          return response.status === 200;
        },
        () => false,
      );
      if (this.transitions.at(-1)?.ready !== ready) this.transitions.push({ at, ready });
      await sleep(POLL_EVERY_MS);
    }
  }
}
