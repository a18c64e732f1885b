import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { errorBody } from './errors';
import { listen, serveWith, type ListenOptions } from './http-server';
import { serviceUnavailable } from './service-unavailable';
import type { FailedAttempt } from './start-with-retries';

/** What a service that is still starting says about itself. */
export interface StartingState {
  /** The dependency the last failed attempt waited for; undefined before the first failure or when unknown. */
  waitingFor: string | undefined;
  failedAttempts: number;
}

/** Every request but the probes; its Retry-After goes with /readyz's 503 too. */
const STARTING = serviceUnavailable('The service is starting; try again shortly');
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Answers while the service starts, before its app exists: `/healthz` 200 (the process is alive,
 * so liveness never restarts a service that waits for its dependencies), `/readyz` 503 in the
 * readiness body's shape with the reason, and every other request 503 SERVICE_UNAVAILABLE with
 * the standard error body. It names the dependency, never an error's text (that goes to the log).
 */
export function startingHandler(state: () => StartingState): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const headers = {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'x-request-id': requestId,
    };
    const { waitingFor, failedAttempts } = state();
    let status: number;
    let body: object;
    if (path === '/healthz') {
      status = 200;
      body = { status: 'ok' };
    } else if (path === '/readyz') {
      status = 503;
      body = {
        status: 'not ready',
        checks: { [waitingFor ?? 'start-up']: 'failing' },
        reason:
          failedAttempts === 0
            ? 'starting: the first attempt to reach the dependencies is under way'
            : `starting: waiting for ${waitingFor ?? 'a dependency'} (${failedAttempts} failed attempt${failedAttempts === 1 ? '' : 's'})`,
      };
    } else {
      status = STARTING.status;
      body = errorBody(STARTING.status, STARTING.code, STARTING.message, { requestId });
    }
    const text = JSON.stringify(body);
    res.writeHead(status, {
      ...headers,
      ...(status === 503 ? STARTING.headers : {}),
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
}

/** A server that answers for a service still starting, and then for its app. */
export interface StartingServer {
  readonly server: Server;
  /** A failed start-up attempt: /readyz names what it waited for. */
  attemptFailed(failure: FailedAttempt): void;
  /** From now on every request goes to `app`; requests already being answered finish as they were. */
  serve(app: RequestListener): void;
}

/** A server made by `listen`, answering as a starting service until `serve` swaps in the app (`serveWith`). */
function startingServer(server: Server, state: StartingState): StartingServer {
  return {
    server,
    attemptFailed(failure) {
      state.failedAttempts = failure.attempt;
      state.waitingFor = failure.dependency;
    },
    serve(app) {
      serveWith(server, app);
    },
  };
}

/**
 * Listens at once, with the limits of `listen()`, answering as a starting service until `serve`
 * hands it the app: orchestrators see a live process whose readiness says what it waits for.
 */
export async function listenWhileStarting(port: number, host: string, options: ListenOptions = {}): Promise<StartingServer> {
  const state: StartingState = { waitingFor: undefined, failedAttempts: 0 };
  const server = await listen(
    startingHandler(() => state),
    port,
    host,
    options,
  );
  return startingServer(server, state);
}
