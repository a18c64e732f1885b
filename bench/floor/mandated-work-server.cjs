// Copied unchanged from ../shared/bench/mandated-work-server.cjs (the product owner's floor for issue 27), so a
// clone can run `npm run bench` on its own. Do not optimise it: it is the baseline the read API is measured against.

// The read path's mandated work, written as plainly as express allows: the floor a /score request can
// cost on the project's own stack. Per request: the Client ID's format, the key's SHA-256 compared in
// constant time against the credential found in a Map, express-rate-limit (memory store, draft-8
// headers, keyed by credential), one JSON body, its SHA-256 as ETag and Content-Digest, a signature
// reused from a cache (decision 24's reuse), the hardening headers, an access record pushed into a
// bounded buffer, a prom-client histogram observation and one pino line per request.
// Run with the project's root as cwd (its node_modules): node ../shared/bench/mandated-work-server.cjs.
// PORT (default 49191), LOG (pino destination file, default /dev/null).
const { createRequire } = require('node:module');
const { join } = require('node:path');
const crypto = require('node:crypto');
const need = createRequire(join(process.cwd(), 'package.json'));
const express = need('express');
const { rateLimit } = need('express-rate-limit');
const pino = need('pino');
const prom = need('prom-client');

const log = pino(pino.destination({ dest: process.env.LOG ?? '/dev/null', sync: false }));
const duration = new prom.Histogram({
  name: 'http_request_duration_seconds',
  help: 'request duration',
  labelNames: ['method', 'route', 'status', 'service'],
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
});
const clientId = 'rs_' + crypto.randomBytes(12).toString('hex');
const apiKey = 'rsk_' + crypto.randomBytes(32).toString('base64url');
const credentials = new Map([[clientId, { digest: crypto.createHash('sha256').update(apiKey).digest(), organizationId: 'org-1', scopes: ['qr_score'], status: 'active', expiresAt: null }]]);
const latest = new Map([['org-1', { scoreDate: '2026-11-01', score: 70, grade: 'Strengthen' }]]);
const { privateKey } = crypto.generateKeyPairSync('ed25519');
const signatures = new Map();
const accessRecords = [];

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use((req, res, next) => {
  const start = process.hrtime.bigint();
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.on('finish', () => {
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    duration.observe({ method: req.method, route: '/v1/customers/:clientId/score', status: res.statusCode, service: 'read-api' }, seconds);
    log.info({ method: req.method, route: '/v1/customers/:clientId/score', status: res.statusCode, ms: seconds * 1000 }, 'request');
  });
  next();
});
const refuse = (res, status, code) => res.status(status).json({ error: 'Unauthorized', code, message: code, timestamp: new Date().toISOString() });
const limiter = rateLimit({
  windowMs: 60_000,
  limit: Number(process.env.LIMIT ?? 1e9),
  standardHeaders: 'draft-8',
  legacyHeaders: false,
  identifier: 'credential',
  keyGenerator: (req) => req.params.clientId,
});
app.get(
  '/v1/customers/:clientId/score',
  (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    const id = req.params.clientId;
    if (!/^rs_[A-Za-z0-9]{16,64}$/.test(id)) return refuse(res, 400, 'INVALID_CLIENT_ID');
    const key = req.get('x-api-key');
    if (!key) return refuse(res, 401, 'MISSING_API_KEY');
    const credential = credentials.get(id);
    if (!credential) return refuse(res, 404, 'CREDENTIAL_NOT_FOUND');
    if (!crypto.timingSafeEqual(crypto.createHash('sha256').update(key).digest(), credential.digest)) return refuse(res, 401, 'INVALID_API_KEY');
    if (credential.status !== 'active') return refuse(res, 401, 'CREDENTIAL_INACTIVE');
    res.locals.credential = credential;
    next();
  },
  limiter,
  (req, res) => {
    const score = latest.get(res.locals.credential.organizationId);
    const body = Buffer.from(JSON.stringify({ clientId: req.params.clientId, ...score }), 'utf8');
    const sha256 = crypto.createHash('sha256').update(body).digest();
    const etag = `"${sha256.toString('base64url')}"`;
    accessRecords.push({ at: Date.now(), clientId: req.params.clientId, resource: 'score', status: 200 });
    if (accessRecords.length >= 10_000) accessRecords.length = 0;
    res.setHeader('ETag', etag);
    if (req.headers['if-none-match'] === etag) return res.status(304).end();
    const created = Math.floor(Date.now() / 1000);
    let signed = signatures.get(etag);
    if (!signed || created - signed.created > 60) {
      const input = `sig1=("@status" "content-type" "content-digest" "@path";req);created=${created};keyid="k1";alg="ed25519"`;
      const base = `"@status": 200\n"content-type": application/json; charset=utf-8\n"content-digest": sha-256=:${sha256.toString('base64')}:\n"@path";req: ${req.path}\n"@signature-params": ${input.slice(5)}`;
      signed = { created, input, signature: crypto.sign(null, Buffer.from(base), privateKey).toString('base64') };
      signatures.set(etag, signed);
    }
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Digest', `sha-256=:${sha256.toString('base64')}:`);
    res.setHeader('Signature-Input', signed.input);
    res.setHeader('Signature', `sig1=:${signed.signature}:`);
    res.status(200).send(body);
  },
);
const port = Number(process.env.PORT ?? 49191);
app.listen(port, '127.0.0.1', () => console.log(`${clientId} ${apiKey}`));
