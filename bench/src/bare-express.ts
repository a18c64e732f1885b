import { createHash } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import { parseArgs } from 'node:util';
import express from 'express';

/**
 * The baseline: express answering a constant Score body, with nothing else on the path. With `node`
 * as its second argument, node's own http module answers the same body instead (BENCH_NODE_BASELINE):
 * what of the baseline's cost is express's own.
 */
const body = { clientId: 'rs_BENCHMARKBASELINE00000000', scoreDate: '2026-11-20', score: 72, grade: 'Strengthen' };

function expressApp(): RequestListener {
  const app = express();
  app.get('/v1/customers/:clientId/score', (_req, res) => {
    res.json(body);
  });
  return app;
}

/** express's `res.json` as node's http module alone writes it: the same headers, the same bytes. */
function nodeListener(): RequestListener {
  const json = JSON.stringify(body);
  const length = Buffer.byteLength(json);
  // express's weak ETag of the body (the etag package's form), computed once: the bytes on the wire are express's.
  const etag = `W/"${length.toString(16)}-${createHash('sha1').update(json).digest('base64').slice(0, 27)}"`;
  return (req, res) => {
    if (req.method !== 'GET' || !/^\/v1\/customers\/[^/]+\/score$/.test(req.url ?? '')) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('X-Powered-By', 'Express');
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', length);
    res.setHeader('ETag', etag);
    res.end(json);
  };
}

/** The port to listen on (run.ts passes 0: any free port), then `express` (the default) or `node`. */
const [port = '0', kind = 'express'] = parseArgs({ allowPositionals: true }).positionals;
const server = createServer(kind === 'node' ? nodeListener() : expressApp());
server.listen(Number(port), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ msg: 'baseline ready', port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
