// A steady load on the read API for scripts/ci/k8s.sh: GET /customers/{clientId}/score with each
// credential of a pool in turn, from CONCURRENCY workers over keep-alive connections (Node's fetch),
// at RATE requests a second in all (0: as fast as the answers come), until SIGTERM or SIGINT or
// DURATION seconds. Then one JSON line on stdout: the answers by status, the 503s by code and whether
// each carried Retry-After, the requests that got no answer by error code, those sent again after
// their connection was closed under them (`retried`, k8s-load-lib.mjs), and when the first and last
// failure came (seconds from the start).
//
//   node scripts/ci/k8s-load.mjs READ_URL CREDENTIALS_JSON [RATE] [CONCURRENCY] [DURATION]
//
// CREDENTIALS_JSON: a file with [{ "clientId": "...", "apiKey": "..." }, ...]. Sends only to READ_URL
// (127.0.0.1 and a NodePort in CI).
import { readFileSync } from 'node:fs';
import { paced, send, Tally, untilStopped } from './k8s-load-lib.mjs';

const [url, credentialsFile, rateArg = '0', concurrencyArg = '8', durationArg = '0'] = process.argv.slice(2);
if (!url || !credentialsFile) {
  console.error('usage: k8s-load.mjs READ_URL CREDENTIALS_JSON [RATE] [CONCURRENCY] [DURATION]');
  process.exit(2);
}
const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8'));

const started = Date.now();
const since = (at = Date.now()) => Math.round(at - started) / 1000;
const tally = new Tally();
let stopping = false;
untilStopped(Number(durationArg)).then(() => (stopping = true));

await paced(
  Number(rateArg),
  Number(concurrencyArg),
  () => stopping,
  async (turn) => {
    const credential = credentials[turn % credentials.length];
    tally.add(await send(`${url}/customers/${credential.clientId}/score`, { headers: { 'x-api-key': credential.apiKey } }));
  },
);
console.log(
  JSON.stringify({
    seconds: since(),
    sent: tally.sent,
    answered: tally.answered,
    perSecond: Math.round(tally.sent / since()),
    statuses: tally.statuses,
    unavailable: tally.unavailable,
    unanswered: tally.unanswered,
    errors: tally.errors,
    retried: tally.retried,
    firstFailureAt: tally.failures[0] ? since(tally.failures[0].at) : null,
    lastFailureAt: tally.failures.at(-1) ? since(tally.failures.at(-1).at) : null,
  }),
);
