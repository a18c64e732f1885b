import { connect, type Socket } from 'node:net';

export interface SlowConnection {
  /** When the TCP connection was established (performance.now()). */
  openedAt: number;
  /** When the server closed it; undefined while it is open. */
  closedAt?: number;
  /** The first bytes the server sent before closing (its 408, or nothing when it dropped the connection). */
  answer: string;
}

export interface SlowConnections {
  readonly connections: readonly SlowConnection[];
  stillOpen(): number;
  /** Resolves once the server has closed every one of them, or rejects after `timeoutMs`. */
  allClosed(timeoutMs: number): Promise<void>;
  destroy(): void;
}

/** What a slowloris client sends: a request line and one header, and never the blank line that ends the headers. */
export const UNFINISHED_HEADERS = 'GET /healthz HTTP/1.1\r\nHost: slow\r\n';

/**
 * Opens `count` connections to `baseUrl` that each send `payload` and then nothing more, in batches
 * (so the listen backlog does not overflow), and records when the server closes each one.
 */
export async function openSlowConnections(
  baseUrl: string,
  count: number,
  payload = UNFINISHED_HEADERS,
  batch = 250,
): Promise<SlowConnections> {
  const { hostname, port } = new URL(baseUrl);
  const sockets: Socket[] = [];
  const connections: SlowConnection[] = [];
  const closeWaiters = new Set<() => void>();

  const openOne = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), hostname);
      const connection: SlowConnection = { openedAt: 0, answer: '' };
      socket.once('connect', () => {
        connection.openedAt = performance.now();
        connections.push(connection);
        if (payload) socket.write(payload);
        resolve();
      });
      socket.on('data', (chunk: Buffer) => {
        if (connection.answer.length < 1024) connection.answer += chunk.toString('latin1');
      });
      socket.on('error', (error) => {
        if (connection.openedAt === 0) reject(error);
      });
      socket.on('close', () => {
        connection.closedAt = performance.now();
        for (const wake of closeWaiters) wake();
      });
      sockets.push(socket);
    });

  try {
    for (let opened = 0; opened < count; opened += batch) {
      await Promise.all(Array.from({ length: Math.min(batch, count - opened) }, openOne));
    }
  } catch (error) {
    for (const socket of sockets) socket.destroy();
    throw error;
  }

  const stillOpen = () => connections.filter((c) => c.closedAt === undefined).length;
  return {
    connections,
    stillOpen,
    allClosed: (timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (stillOpen() > 0) return;
          closeWaiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          closeWaiters.delete(check);
          reject(new Error(`${stillOpen()} of ${connections.length} slow connections still open after ${timeoutMs} ms`));
        }, timeoutMs);
        closeWaiters.add(check);
        check();
      }),
    destroy: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** Milliseconds each connection lived, sorted. */
export function lifetimes(connections: readonly SlowConnection[]): number[] {
  return connections.map((c) => (c.closedAt ?? Number.NaN) - c.openedAt).sort((a, b) => a - b);
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
