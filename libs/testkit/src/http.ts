import type { Server } from 'node:http';
import type { Express } from 'express';
import { closeServer, listen, portOf } from '@rsd/platform';

export interface RunningApp {
  baseUrl: string;
  server: Server;
  close(): Promise<void>;
}

/** Starts an app on an ephemeral loopback port: tests speak real HTTP over a real socket. */
export async function startApp(app: Express): Promise<RunningApp> {
  const server = await listen(app, 0, '127.0.0.1');
  return {
    baseUrl: `http://127.0.0.1:${portOf(server)}`,
    server,
    // A test's server closes whole: a connection still busy (a request its test no longer waits for,
    // on a loaded machine) must not hold the suite's teardown past its timeout.
    close: () => {
      const closed = closeServer(server);
      server.closeAllConnections();
      return closed;
    },
  };
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** fetch that never throws on a status, and parses JSON when there is any. */
export async function request<T = any>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text.length > 0) body = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: body as T };
}
