// The webhook receiver of scripts/ci/k8s.sh's mixed load, run in the cluster from the product's own
// image (no other image is available offline) with this file mounted from a ConfigMap
// (k8s-receiver.yaml): node's http module only.
//
//   POST any path      a delivery: recorded with its webhook-id and webhook-timestamp headers (the
//                      notifier stamps each attempt with its own time), its path (the load names
//                      each webhook's URL after its grant), when it came, and from the body its type
//                      and the fields of `data` the load checks; answered 204 at once
//   GET /record        every delivery recorded so far, in order, as JSON
//   GET /healthz       200
//
// It keeps its record in memory: it is not one of the services the run deletes, and a restart would
// show as lost deliveries, never hide one. Signatures are not checked here (the webhook suites do):
// what this run proves is that each delivery arrives, and how often.
import { createServer } from 'node:http';

const PORT = Number(process.env.RECEIVER_PORT ?? 8090);
const MAX_BODY_BYTES = 1024 * 1024;
const record = [];

function fieldsOf(body) {
  try {
    const { type, data } = JSON.parse(body);
    const { clientId, scoreDate, score, reason } = data ?? {};
    return { type, clientId, scoreDate, score, reason };
  } catch {
    return { type: 'not JSON' };
  }
}

const server = createServer((request, response) => {
  if (request.method === 'GET') {
    if (request.url === '/record') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(record));
    } else if (request.url === '/healthz') {
      response.writeHead(200).end('ok');
    } else {
      response.writeHead(404).end();
    }
    return;
  }
  const chunks = [];
  let size = 0;
  request.on('data', (chunk) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  request.on('end', () => {
    const header = (name) => (typeof request.headers[name] === 'string' ? request.headers[name] : null);
    record.push({
      id: header('webhook-id'),
      timestamp: header('webhook-timestamp'),
      path: request.url,
      at: Date.now(),
      ...fieldsOf(Buffer.concat(chunks).toString()),
    });
    response.writeHead(size <= MAX_BODY_BYTES ? 204 : 413).end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(PORT, '0.0.0.0');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
