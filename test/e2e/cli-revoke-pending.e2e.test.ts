import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runRsd } from '../support/rsd-cli';

const RECORD = { clientId: 'rs_AAAAAAAAAAAAAAAA', organizationId: 'acme', status: 'revoked' };

/**
 * A stand-in credentials service that answers every revoke with the status under test: an outage
 * of the event log cannot be staged in the embedded runtime, whose log is a local file.
 */
describe('rsd authorizations revoke: what the user is told (decision 29)', () => {
  let server: Server;
  let answer: { status: number; body: unknown };
  const paths: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      paths.push(`${req.method} ${req.url}`);
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  });

  afterAll(() => new Promise<void>((closed) => server.close(() => closed())));

  async function revoke() {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const args = [
      'authorizations',
      'revoke',
      '--org',
      'acme',
      '--client-id',
      RECORD.clientId,
      '--credentials-url',
      url,
      '--token',
      'opaque',
    ];
    return runRsd(args);
  }

  test('when the revoke is answered 202 with enforcement pending, then the CLI prints the record, says so plainly and exits 3', async () => {
    answer = { status: 202, body: { ...RECORD, enforcement: 'pending' } };

    const result = await revoke();

    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ clientId: RECORD.clientId, enforcement: 'pending' });
    expect(result.stderr).toContain('recorded but NOT yet enforced');
    expect(paths.at(-1)).toBe(`POST /v1/organizations/acme/authorizations/${RECORD.clientId}/revoke`);
  });

  test('when the revoke is answered 200, then the CLI prints the record and exits 0 without a warning', async () => {
    answer = { status: 200, body: RECORD };

    const result = await revoke();

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(RECORD);
    expect(result.stderr).toBe('');
  });
});
