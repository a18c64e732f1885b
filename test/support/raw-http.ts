import { connect, createServer } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON when it is JSON, else undefined. */
  json: Record<string, unknown> | undefined;
}

export interface RawRequest {
  method?: string;
  /** Sent byte for byte: no normalisation of `..`, no escaping, so hostile paths arrive as written. */
  path: string;
  headers?: Array<[string, string]>;
  body?: string | Buffer;
}

/**
 * One HTTP/1.1 request over a fresh socket, written as given: what fetch and http.request refuse or
 * rewrite (dot segments, raw bytes, header floods) reaches the server as a hostile client sends it.
 * `Host`, `Connection: close` and, with a body, `Content-Length` are added unless the request has them.
 */
export async function rawRequest(baseUrl: string, request: RawRequest | Buffer, timeoutMs = 15_000): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const bytes = Buffer.isBuffer(request) ? request : encode(request, `${hostname}:${port}`);
  const received = await new Promise<Buffer>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close while we still write (a body it refused early): what it sent is the answer.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
  return parseResponse(received);
}

function encode({ method = 'GET', path, headers = [], body }: RawRequest, host: string): Buffer {
  const names = new Set(headers.map(([name]) => name.toLowerCase()));
  const all: Array<[string, string]> = [
    ...(names.has('host') ? [] : [['Host', host] as [string, string]]),
    ...(names.has('connection') ? [] : [['Connection', 'close'] as [string, string]]),
    ...headers,
    ...(body !== undefined && !names.has('content-length') && !names.has('transfer-encoding')
      ? [['Content-Length', String(Buffer.byteLength(body))] as [string, string]]
      : []),
  ];
  const head = `${method} ${path} HTTP/1.1\r\n${all.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body === undefined ? Buffer.alloc(0) : Buffer.from(body)]);
}

export function parseResponse(raw: Buffer): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`not an HTTP response: ${JSON.stringify(raw.toString('latin1', 0, 200))}`);
  const [statusLine = '', ...lines] = raw.toString('latin1', 0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const rawBody = raw.subarray(end + 4);
  const body = (headers['transfer-encoding']?.includes('chunked') ? dechunk(rawBody) : rawBody).toString('utf8');
  let json: Record<string, unknown> | undefined;
  if ((headers['content-type'] ?? '').includes('json') && body.length > 0) json = JSON.parse(body) as Record<string, unknown>;
  return { status, headers, body, json };
}

function dechunk(chunked: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = chunked.indexOf('\r\n', at);
    const size = parseInt(chunked.toString('latin1', at, lineEnd), 16);
    if (!size) return Buffer.concat(parts);
    parts.push(chunked.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** A loopback port nobody listens on right now, for processes that must be told their port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
