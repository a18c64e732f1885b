#!/usr/bin/env node
// Verifies a Resilience Score API response's signature by hand (RFC 9421, Ed25519), with nothing but
// Node.js: the lines below are the whole check, so a recipient can read what "verified" means.
//
//   curl -sS -D score.headers -o score.json -H "x-api-key: $RSD_API_KEY" "$API/v1/customers/$CLIENT_ID/score"
//   curl -sS -o jwks.json "$API/.well-known/jwks.json"
//   node scripts/verify-response.mjs score.headers score.json jwks.json "/v1/customers/$CLIENT_ID/score"
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';

const [headersFile, bodyFile, jwksFile, path] = process.argv.slice(2);
if (!path) throw new Error('usage: verify-response.mjs HEADERS_FILE BODY_FILE JWKS_FILE REQUEST_PATH');

// curl -D writes the status line, then "name: value" lines.
const [statusLine, ...headerLines] = readFileSync(headersFile, 'utf8').trim().split(/\r?\n/);
const status = statusLine.split(' ')[1];
const header = (name) =>
  headerLines
    .find((line) => line.toLowerCase().startsWith(`${name}:`))
    ?.slice(name.length + 1)
    .trim();
const body = readFileSync(bodyFile);

// 1. The body is the one signed: its SHA-256 must equal Content-Digest (RFC 9530).
const digest = createHash('sha256').update(body).digest('base64');
if (header('content-digest') !== `sha-256=:${digest}:`) throw new Error('the body does not match Content-Digest');

// 2. The signature base (RFC 9421 section 2.5), rebuilt from what was received.
const params = header('signature-input').replace(/^sig1=/, '');
const base = [
  `"@status": ${status}`,
  `"content-type": ${header('content-type')}`,
  `"content-digest": ${header('content-digest')}`,
  `"@path";req: ${path}`,
  `"@signature-params": ${params}`,
].join('\n');

// 3. The Ed25519 signature against the published key named by keyid.
const kid = /keyid="([^"]+)"/.exec(params)[1];
const jwk = JSON.parse(readFileSync(jwksFile, 'utf8')).keys.find((key) => key.kid === kid);
if (!jwk) throw new Error(`key ${kid} is not published`);
const signature = Buffer.from(/^sig1=:([^:]+):$/.exec(header('signature'))[1], 'base64');
const valid = verify(null, Buffer.from(base), createPublicKey({ key: jwk, format: 'jwk' }), signature);
console.log(
  valid ? `verified: signed by ${kid} at ${new Date(Number(/created=(\d+)/.exec(params)[1]) * 1000).toISOString()}` : 'NOT VALID',
);
process.exitCode = valid ? 0 : 1;
