// A steady load on the read API for scripts/ci/k8s.sh: GET /customers/{clientId}/score with each
// credential of a pool in turn, from CONCURRENCY workers over keep-alive connections (Node's fetch),
// at RATE requests a second in all (0: as fast as the answers come), until SIGTERM or SIGINT or
// DURATION seconds. Then one JSON line on stdout: the answers by status, the 503s by code and whether
// each carried Retry-After, the requests that got no answer by error code, those sent again after
// their connection was closed under them (`retried`), and when the first and last of these came
// (seconds from the start).
//
//   node scripts/ci/k8s-load.mjs READ_URL CREDENTIALS_JSON [RATE] [CONCURRENCY] [DURATION]
//
// CREDENTIALS_JSON: a file with [{ "clientId": "...", "apiKey": "..." }, ...]. Sends only to READ_URL
// (127.0.0.1 and a NodePort in CI).
import { readFileSync } from 'node:fs';

const [url, credentialsFile, rateArg = '0', concurrencyArg = '8', durationArg = '0'] = process.argv.slice(2);
if (!url || !credentialsFile) {
  console.error('usage: k8s-load.mjs READ_URL CREDENTIALS_JSON [RATE] [CONCURRENCY] [DURATION]');
  process.exit(2);
}
const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8'));
const rate = Number(rateArg);
const concurrency = Number(concurrencyArg);
const duration = Number(durationArg);
const TIMEOUT_MS = 10_000;

const started = performance.now();
const since = () => Math.round(performance.now() - started) / 1000;
const statuses = {};
const unavailable = {};
const errors = {};
const failures = [];
let sent = 0;
let stopping = false;

function note(kind, detail) {
  failures.push({ at: since(), kind, detail });
}

// A GET is idempotent: like browsers and proxies (RFC 9112, 9.3.1.1), a request whose kept-alive
// connection was closed or reset under it before any answer (undici's UND_ERR_SOCKET, "other side
// closed", or ECONNRESET) is sent once more, on a new connection; counted in `retried`. Any other
// error, or a second one, fails.
const CLOSED_UNDER_IT = new Set(['UND_ERR_SOCKET', 'ECONNRESET']);
const retried = {};

async function one(credential, attempt = 0) {
  if (attempt === 0) sent += 1;
  try {
    const answer = await fetch(`${url}/customers/${credential.clientId}/score`, {
      headers: { 'x-api-key': credential.apiKey },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await answer.text();
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    if (answer.status >= 500) {
      let code = 'none';
      try {
        code = JSON.parse(text).code ?? 'none';
      } catch {
        code = 'not JSON';
      }
      const key = `${answer.status} ${code}${answer.headers.has('retry-after') ? ' with Retry-After' : ' without Retry-After'}`;
      unavailable[key] = (unavailable[key] ?? 0) + 1;
      note('status', key);
    }
  } catch (error) {
    const code = error?.cause?.code ?? error?.name ?? 'unknown';
    if (CLOSED_UNDER_IT.has(code) && attempt === 0) {
      retried[code] = (retried[code] ?? 0) + 1;
      note('retried', code);
      return one(credential, 1);
    }
    errors[code] = (errors[code] ?? 0) + 1;
    note('error', code);
  }
}

async function worker(index) {
  const interval = rate > 0 ? (1000 * concurrency) / rate : 0;
  let next = performance.now() + (interval * index) / concurrency;
  let turn = index;
  while (!stopping) {
    if (interval > 0) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
      next += interval;
      if (stopping) break;
    }
    await one(credentials[turn % credentials.length]);
    turn += concurrency;
  }
}

function stop() {
  stopping = true;
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (duration > 0) setTimeout(stop, duration * 1000);

await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
const answered = Object.values(statuses).reduce((a, b) => a + b, 0);
const unanswered = Object.values(errors).reduce((a, b) => a + b, 0);
console.log(
  JSON.stringify({
    seconds: since(),
    sent,
    answered,
    perSecond: Math.round(sent / since()),
    statuses,
    unavailable,
    unanswered,
    errors,
    retried,
    firstFailureAt: failures[0]?.at ?? null,
    lastFailureAt: failures.at(-1)?.at ?? null,
  }),
);
