import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export async function listen(app: Express, port: number, host?: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host ?? '0.0.0.0', () => resolve(server));
    server.once('error', reject);
  });
}

export function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/** Stops accepting, lets in-flight requests finish, then drops idle keep-alive sockets. */
export async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  await new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
}
