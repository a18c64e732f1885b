import { createServer, IncomingMessage, ServerResponse, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { errorBody, reasonPhrase } from './errors';
import { httpServerConfigSchema, httpServerLimits, type HttpServerLimits } from './http-server-config';
import { loadConfig } from './config';

export interface ListenOptions {
  /** Default: the documented defaults of `httpServerConfigSchema`. */
  limits?: HttpServerLimits;
  /** Where to report connections refused at the connection cap. */
  log?: Logger;
}

/**
 * An HTTP server with explicit limits (docs/decisions/0106-http-server-limits.md). Node checks the
 * headers and request timeouts of open connections every `connectionsCheckingInterval` (30 s by
 * default, which would let a slow connection live that much longer): here a tenth of the headers
 * timeout, at most 1 s, so a connection that has not finished its headers is closed within
 * `headersTimeoutMs` plus at most a second.
 */
export async function listen(app: RequestListener, port: number, host = '0.0.0.0', options: ListenOptions = {}): Promise<Server> {
  const limits = options.limits ?? httpServerLimits(loadConfig(httpServerConfigSchema, {}));
  const messages = appMessages();
  const server: Server = createServer(
    {
      IncomingMessage: messages.IncomingMessage,
      ServerResponse: messages.ServerResponse,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      maxHeaderSize: limits.maxHeaderSize,
      connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(limits.headersTimeoutMs / 10))),
    },
    (request, response) => {
      // Shutting down (closeServer): this answer closes its connection (`Connection: close`), so the
      // client sends its next request on a new connection, to another replica.
      if (draining.has(server)) response.shouldKeepAlive = false;
      handlers.get(server)!(request, response);
    },
  );
  handlers.set(server, app);
  messagesOf.set(server, messages);
  messages.madeFor(app);
  server.maxConnections = limits.maxConnections;
  server.on('clientError', answerClientError);
  if (options.log) server.on('drop', reportDrops(options.log, limits.maxConnections));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * What Node itself refuses before any service code runs (a malformed request, headers over the size
 * limit, a request not received in time) gets the same error body and `nosniff` as every other
 * response, then the connection is closed. No `code`: these come from the HTTP layer, not the API.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // Once a response has begun on this connection, another one would corrupt it: just close.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    socket.write(rawErrorResponse(statusFor(error.code)));
  }
  socket.destroy();
}

function statusFor(code: string | undefined): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

const MESSAGES: Record<number, string> = {
  400: 'The request is not valid HTTP',
  408: 'The request was not received in time',
  413: 'The request body is larger than this server accepts',
  431: 'The request headers are larger than this server accepts',
};

function rawErrorResponse(status: number): string {
  const body = JSON.stringify(errorBody(status, undefined, MESSAGES[status] ?? reasonPhrase(status)));
  return [
    `HTTP/1.1 ${status} ${reasonPhrase(status)}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'X-Content-Type-Options: nosniff',
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** One warning when the cap is first reached, then at most one every 10 s with the count, not one per connection. */
function reportDrops(log: Logger, maxConnections: number): () => void {
  let dropped = 0;
  let reportedAt = 0;
  return () => {
    dropped += 1;
    const now = Date.now();
    if (now - reportedAt < 10_000) return;
    log.warn({ maxConnections, dropped }, 'connection cap reached: new connections are closed at once');
    reportedAt = now;
    dropped = 0;
  };
}

/** The app each server made by `listen` hands its requests to. */
const handlers = new WeakMap<Server, RequestListener>();

/**
 * From now on the server hands every request to `app`; requests already being answered finish as they
 * were. The server's own handling stays in front of it: once it drains, every answer closes its
 * connection, whichever app gives it (replacing the server's request listener would lose that, and
 * with it the drain: kept-alive connections were then dropped under their clients' next requests).
 */
export function serveWith(server: Server, app: RequestListener): void {
  if (!handlers.has(server)) throw new Error('serveWith: the server was not made by listen()');
  handlers.set(server, app);
  messagesOf.get(server)!.madeFor(app);
}

/** The request and response classes of each server made by `listen`. */
const messagesOf = new WeakMap<Server, AppMessages>();

interface AppMessages {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
  /** The messages made from now on are `app`'s own, if it has its own (express's), else node's. */
  madeFor(app: RequestListener): void;
}

/**
 * A server's requests and responses made with the app's own prototypes, when it has them: express
 * gives every request and response its app's (`app.request`, `app.response`, which inherit node's)
 * with `Object.setPrototypeOf` as it takes them, which costs a few microseconds a request and is
 * nothing when the message has that prototype already (the language's own rule for the same
 * prototype). These are node's own messages, made by node's own constructors; only their prototype
 * is chosen when they are made, so the app's methods are there from the start. A request made before
 * `serveWith` swaps the app and answered by the new one is re-parented by express, as every request was.
 */
function appMessages(): AppMessages {
  // Constructors only in name: each makes node's message, with the prototype set on it by `madeFor`.
  const request = function (this: unknown, socket: unknown): IncomingMessage {
    return Reflect.construct(IncomingMessage, [socket], request) as IncomingMessage;
  };
  const response = function (this: unknown, req: unknown, options: unknown): ServerResponse {
    return Reflect.construct(ServerResponse, [req, options], response) as ServerResponse;
  };
  return {
    IncomingMessage: request as unknown as typeof IncomingMessage,
    ServerResponse: response as unknown as typeof ServerResponse,
    madeFor(app) {
      const own = app as Partial<Record<'request' | 'response', unknown>>;
      const inherits = (prototype: unknown, base: object): prototype is object =>
        typeof prototype === 'object' && prototype !== null && Object.prototype.isPrototypeOf.call(base, prototype);
      request.prototype = inherits(own.request, IncomingMessage.prototype) ? own.request : IncomingMessage.prototype;
      response.prototype = inherits(own.response, ServerResponse.prototype) ? own.response : ServerResponse.prototype;
    },
  };
}

export function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

const draining = new WeakSet<Server>();

/**
 * Stops accepting, lets in-flight requests finish, then drops idle keep-alive sockets. From the call on,
 * every answer closes its connection (an answer finished after the close would otherwise leave its
 * connection open until the keep-alive timeout). With `drainMs`, first drains the keep-alive
 * connections for up to that long (less once none is left open). Dropping an idle keep-alive
 * connection at once races with a request its client may be sending on it at that moment, which then
 * fails with no answer at all; a client that keeps using its connection is told to go instead, on its
 * next answer.
 */
export async function closeServer(server: Server, drainMs = 0): Promise<void> {
  if (!server.listening) return;
  draining.add(server);
  if (drainMs > 0) {
    const deadline = Date.now() + drainMs;
    while (Date.now() < deadline && (await openConnections(server)) > 0) {
      await new Promise((done) => setTimeout(done, 20));
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}
