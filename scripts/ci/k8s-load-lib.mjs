// What the load generators of scripts/ci/k8s.sh share (k8s-load.mjs, the read API alone, and
// k8s-mixed-load.mjs, every service): one request with the rule for a connection closed under it,
// what counts as a documented refusal, the tally of answers, and paced workers.

/** No answer within this is an error (`TimeoutError`). */
export const TIMEOUT_MS = 10_000;

/**
 * Like browsers and proxies (RFC 9112, 9.3.1.1), a request whose kept-alive connection was closed or
 * reset under it before any answer (undici's UND_ERR_SOCKET, "other side closed", or ECONNRESET) is
 * sent once more, on a new connection; counted in `retried`. Any other error, or a second one, fails.
 * The mixed load sends its writes by the same rule: each of them is safe to repeat (a revoke and a
 * score by their own contract) or, when it is not (a create), the unanswered first one is simply
 * not an acknowledged write.
 */
export const CLOSED_UNDER_IT = new Set(['UND_ERR_SOCKET', 'ECONNRESET']);

/** The only 503 a service documents (libs/platform/src/errors.ts): SERVICE_UNAVAILABLE, with Retry-After. */
export const DOCUMENTED_503 = '503 SERVICE_UNAVAILABLE with Retry-After';

/**
 * One request. Resolves to `{ status, body, json, refusal, at }` for an answer (`refusal`: for a 5xx,
 * its status, code and whether it carried Retry-After, as DOCUMENTED_503 spells the documented one),
 * or `{ error, at }` for none; `retried` names the error a first attempt met, when it was sent again.
 * `at`: Date.now() when the answer (or the error) came.
 */
export async function send(url, init = {}) {
  let retried;
  for (let attempt = 0; ; attempt += 1) {
    try {
      const answer = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
      const body = await answer.text();
      let json;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const at = Date.now();
      const result = { status: answer.status, body, json, at, ...(retried ? { retried } : {}) };
      if (answer.status >= 500) {
        const code = json === undefined ? 'not JSON' : (json.code ?? 'none');
        result.refusal = `${answer.status} ${code} ${answer.headers.has('retry-after') ? 'with' : 'without'} Retry-After`;
      }
      return result;
    } catch (error) {
      const code = error?.cause?.code ?? error?.name ?? 'unknown';
      if (CLOSED_UNDER_IT.has(code) && attempt === 0) {
        retried = code;
        continue;
      }
      return { error: code, at: Date.now(), ...(retried ? { retried } : {}) };
    }
  }
}

/**
 * Counts of what came back: answers by status, 5xx refusals by kind, errors by code, retries by the
 * error that caused them, and every failure (a refusal or an error) with when it came.
 */
export class Tally {
  constructor(clock = () => Date.now()) {
    this.clock = clock;
    this.sent = 0;
    this.statuses = {};
    this.unavailable = {};
    this.errors = {};
    this.retried = {};
    this.failures = [];
  }

  /**
   * Records one result of send(); `label` goes with its failure, if it is one. With `expected` (the
   * statuses that answer the request as it should be answered), any other status below 500 is a
   * failure too, named by its status and code.
   */
  add(result, label, expected) {
    this.sent += 1;
    const bump = (map, key) => (map[key] = (map[key] ?? 0) + 1);
    if (result.retried) bump(this.retried, result.retried);
    if (result.error !== undefined) {
      bump(this.errors, result.error);
      this.failures.push({ at: result.at, kind: 'error', detail: result.error, ...(label ? { label } : {}) });
      return;
    }
    bump(this.statuses, result.status);
    if (result.refusal) {
      bump(this.unavailable, result.refusal);
      this.failures.push({ at: result.at, kind: 'status', detail: result.refusal, ...(label ? { label } : {}) });
    } else if (expected && !expected.includes(result.status)) {
      const detail = `${result.status} ${result.json?.code ?? 'no code'}`;
      this.failures.push({ at: result.at, kind: 'status', detail, ...(label ? { label } : {}) });
    }
  }

  get answered() {
    return Object.values(this.statuses).reduce((a, b) => a + b, 0);
  }

  get unanswered() {
    return Object.values(this.errors).reduce((a, b) => a + b, 0);
  }
}

/**
 * CONCURRENCY workers calling `one(turn)` with turns index, index + CONCURRENCY, …, at RATE calls a
 * second in all (0: as fast as the calls finish), until `stopped()`.
 */
export async function paced(rate, concurrency, stopped, one) {
  const interval = rate > 0 ? (1000 * concurrency) / rate : 0;
  const worker = async (index) => {
    let next = performance.now() + (interval * index) / concurrency;
    let turn = index;
    while (!stopped()) {
      if (interval > 0) {
        const wait = next - performance.now();
        if (wait > 0) await new Promise((done) => setTimeout(done, wait));
        next += interval;
        if (stopped()) break;
      }
      await one(turn);
      turn += concurrency;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
}

/** A promise that resolves on SIGTERM or SIGINT, or after `seconds` when it is above 0. */
export function untilStopped(seconds = 0) {
  return new Promise((done) => {
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
    if (seconds > 0) setTimeout(done, seconds * 1000).unref();
  });
}
