import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readDevSecret, signDevToken } from '@rsd/platform';
import { aScoreSubmission, request } from '@rsd/testkit';
import { REPO_ROOT, startEmbedded, type EmbeddedProcess } from '../support/embedded-process';
import { runRsd } from '../support/rsd-cli';

const run = promisify(execFile);
const ORG = 'recipient-org';

/**
 * Decisions 23-25 on the embedded runtime as a recipient meets them: conditional requests, signed
 * responses checked by the CLI against the published keys (and refused when a proxy tampers with
 * them), history pages, and a signing key that survives a restart.
 */
describe('for recipients, on the embedded runtime: ETags, signatures and history', () => {
  let dataDir: string;
  let product: EmbeddedProcess;
  let credential: { clientId: string; apiKey: string };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'rsd-recipient-'));
    product = await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    const token = await signDevToken((await readDevSecret(dataDir))!, { org: ORG, scope: 'authorizations:write scores:write' });
    const created = await request<{ clientId: string; apiKey: string }>(
      `${product.urls.credentials}/v1/organizations/${ORG}/authorizations`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score', 'pillar_breakdown', 'score_trend'] }),
      },
    );
    credential = created.body;
    const scores = ['2026-11-18', '2026-11-19', '2026-11-20'].map((scoreDate, i) =>
      aScoreSubmission({ organizationId: ORG, scoreDate, score: 60 + i * 5 }),
    );
    const posted = await request(`${product.urls.scoreIngest}/v1/scores`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scores }),
    });
    expect(posted.status).toBe(202);
  }, 90_000);

  afterAll(async () => {
    await product?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const read = (resource: string, headers: Record<string, string> = {}, base = product.urls.readApi) =>
    fetch(`${base}/v1/customers/${credential.clientId}/${resource}`, { headers: { 'x-api-key': credential.apiKey, ...headers } });

  const rsd = (args: string[], apiUrl = product.urls.readApi) =>
    runRsd([...args, '--client-id', credential.clientId], { RSD_API_URL: apiUrl, RSD_API_KEY: credential.apiKey });

  test('when the score is read again with its ETag, then the answer is 304 with no body', async () => {
    const first = await read('score');
    const etag = first.headers.get('etag');
    expect(first.status).toBe(200);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);

    const again = await read('score', { 'if-none-match': etag! });

    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
  });

  test('when the CLI reads with --verify, then it checks each resource against the published key and says so', async () => {
    for (const args of [
      ['score', '--verify'],
      ['pillars', '--verify'],
      ['history', '--verify', '--limit', '2'],
    ]) {
      const answer = await rsd(args);
      expect(answer.stderr).toMatch(/^rsd: signature verified \(key [A-Za-z0-9_-]{43}, signed \d{4}-\d{2}-\d{2}T/);
      expect(answer.code).toBe(0);
    }
    const history = JSON.parse((await rsd(['history', '--limit', '2'])).stdout) as {
      scores: { change: { score: number } }[];
      nextCursor: string;
    };
    expect(history.scores.map((item) => item.change.score)).toEqual([5, 5]);
    expect(typeof history.nextCursor).toBe('string');
  });

  test("when the README's by-hand check is run on a response saved with curl's layout, then it says verified, and NOT VALID once the body changes", async () => {
    const requestPath = `/v1/customers/${credential.clientId}/score`;
    const response = await read('score');
    const headerLines = [`HTTP/1.1 ${response.status} OK`];
    response.headers.forEach((value, name) => headerLines.push(`${name}: ${value}`));
    const body = Buffer.from(await response.arrayBuffer());
    const jwks = await (await fetch(`${product.urls.readApi}/.well-known/jwks.json`)).text();
    const files = { headers: join(dataDir, 'score.headers'), body: join(dataDir, 'score.json'), jwks: join(dataDir, 'jwks.json') };
    await writeFile(files.headers, `${headerLines.join('\r\n')}\r\n\r\n`);
    await writeFile(files.body, body);
    await writeFile(files.jwks, jwks);
    const check = () => run('node', [join(REPO_ROOT, 'scripts/verify-response.mjs'), files.headers, files.body, files.jwks, requestPath]);

    expect((await check()).stdout).toMatch(/^verified: signed by [A-Za-z0-9_-]{43} at \d{4}-/);
    const tamperedHeaders = headerLines.map((line) =>
      line.startsWith('content-digest:') ? `content-digest: sha-256=:${createHash('sha256').update('{}').digest('base64')}:` : line,
    );
    await writeFile(files.headers, `${tamperedHeaders.join('\r\n')}\r\n\r\n`);
    await writeFile(files.body, '{}');
    await expect(check()).rejects.toMatchObject({ code: 1, stdout: 'NOT VALID\n' });
  });

  describe('behind a proxy that tampers', () => {
    let proxy: Server;
    let tamper: (path: string, body: string) => { path: string; body: string };

    beforeAll(async () => {
      proxy = createServer((req, res) => {
        void (async () => {
          const { path } = tamper(req.url!, '');
          const upstream = await fetch(`${product.urls.readApi}${path}`, {
            headers: { 'x-api-key': String(req.headers['x-api-key'] ?? '') },
          });
          const text = tamper(req.url!, await upstream.text()).body;
          const headers: Record<string, string> = {};
          upstream.headers.forEach((value, name) => {
            if (name !== 'content-length' && name !== 'transfer-encoding') headers[name] = value;
          });
          res.writeHead(upstream.status, headers).end(text);
        })();
      });
      await new Promise<void>((listening) => proxy.listen(0, '127.0.0.1', listening));
    });

    afterAll(() => new Promise<void>((closed) => proxy.close(() => closed())));

    const proxyUrl = () => `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    test('when the body is changed on the way, then --verify refuses it and exits 1', async () => {
      tamper = (path, body) => ({ path, body: body.replace(/"score":\d+/, '"score":99') });

      const answer = await rsd(['score', '--verify'], proxyUrl());

      expect(answer.code).toBe(1);
      expect(answer.stderr).toContain('signature NOT valid: the body does not match its Content-Digest');
    });

    test("when another path's signed response is served instead, then --verify refuses it", async () => {
      tamper = (path, body) => ({ path: path.replace('/pillars', '/score'), body });

      const answer = await rsd(['pillars', '--verify'], proxyUrl());

      expect(answer.code).toBe(1);
      expect(answer.stderr).toContain('signature NOT valid: the signature does not match the response');
    });
  });

  test('when the product restarts on the same data directory, then it signs with the same key, kept in a file only its owner can read', async () => {
    const before = await request<{ keys: { kid: string }[] }>(`${product.urls.readApi}/.well-known/jwks.json`);
    expect((await stat(join(dataDir, 'response-signing-keys.json'))).mode & 0o777).toBe(0o600);

    await product.stop();
    product = await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    const after = await request<{ keys: { kid: string }[] }>(`${product.urls.readApi}/.well-known/jwks.json`);

    expect(after.body.keys.map((key) => key.kid)).toEqual(before.body.keys.map((key) => key.kid));
    expect(after.body.keys).toHaveLength(1);
    expect((await rsd(['score', '--verify'])).code).toBe(0);
  }, 90_000);
});
