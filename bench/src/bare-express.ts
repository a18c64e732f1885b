import { parseArgs } from 'node:util';
import express from 'express';

/** The baseline: express answering a constant Score body, with nothing else on the path. */
const body = { clientId: 'rs_BENCHMARKBASELINE00000000', scoreDate: '2026-11-20', score: 72, grade: 'Strengthen' };
const app = express();
app.get('/v1/customers/:clientId/score', (_req, res) => {
  res.json(body);
});
/** The port to listen on, the one argument (run.ts passes 0: any free port). */
const [port = '0'] = parseArgs({ allowPositionals: true }).positionals;
const server = app.listen(Number(port), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ msg: 'baseline ready', port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
