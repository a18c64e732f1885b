import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookSender, type Resolve } from './send-webhook';

/** A target on loopback answering as `listener` does; closed after each test. */
async function target(
  listener: RequestListener,
  host = '127.0.0.1',
  onPort = 0,
): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits += 1;
    listener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(onPort, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    hits: () => hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const webhook = (url: string, allowedCidrs: string[] | null = null) => ({
  url,
  headers: { 'webhook-id': 'msg_test' },
  body: '{"type":"score.updated"}',
  allowedCidrs,
});
const allowPrivate = { policy: { allowPrivate: true }, timeoutMs: 2_000, maxResponseBytes: 1_024 };

describe('one webhook attempt', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()));
  });

  it('when the target redirects, then the redirect is the answer: a failed attempt, not followed', async () => {
    const elsewhere = await target((_req, res) => res.writeHead(204).end());
    const redirecting = await target((_req, res) => res.writeHead(302, { location: elsewhere.url }).end());
    open.push(elsewhere, redirecting);

    const outcome = await webhookSender(allowPrivate)(webhook(redirecting.url));

    expect(outcome).toEqual({ outcome: 'answered', status: 302 });
    expect(elsewhere.hits()).toBe(0);
  });

  it('when the target does not answer within the timeout, then the attempt fails as a timeout', async () => {
    const silent = await target(() => undefined);
    open.push(silent);

    const started = Date.now();
    const outcome = await webhookSender({ ...allowPrivate, timeoutMs: 300 })(webhook(silent.url));

    expect(outcome).toMatchObject({ outcome: 'failed', failure: 'timeout' });
    // The deadline under test (300 ms), with room for a slow machine: a sender that waited for an answer would never end.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('when the target answers with a huge body, then its status counts and the body is not read past the cap', async () => {
    let written = 0;
    let cut = () => undefined as void;
    const closed = new Promise<void>((done) => (cut = done));
    const flooding = await target((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (written < 50 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (written < 50 * 1024 * 1024) res.once('drain', pump);
        else res.end();
      };
      res.on('close', () => {
        res.removeAllListeners('drain');
        cut();
      });
      pump();
    });
    open.push(flooding);

    const outcome = await webhookSender(allowPrivate)(webhook(flooding.url));
    // The target sees its connection closed: what it wrote by then is all it wrote.
    await closed;

    expect(outcome).toEqual({ outcome: 'answered', status: 200 });
    // The connection was cut long before the 50 MB the target wanted to send.
    expect(written).toBeLessThan(10 * 1024 * 1024);
  });

  it('when a name resolves to a private address and private targets are not allowed, then nothing is sent', async () => {
    const inside = await target((_req, res) => res.writeHead(204).end());
    open.push(inside);
    const port = new URL(inside.url).port;
    const resolve: Resolve = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);

    const outcome = await webhookSender({ ...allowPrivate, policy: { allowPrivate: false }, resolve })(
      webhook(`https://hooks.example:${port}/hook`),
    );

    expect(outcome).toMatchObject({ outcome: 'failed', failure: 'target_not_allowed' });
    expect(inside.hits()).toBe(0);
  });

  it("when the receiver's address is outside the allow list of the grant the delivery carries, then nothing is sent and it is skipped, not failed", async () => {
    const receiver = await target((_req, res) => res.writeHead(204).end());
    open.push(receiver);
    const port = new URL(receiver.url).port;
    const resolve: Resolve = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);

    const literal = await webhookSender(allowPrivate)(webhook(receiver.url, ['203.0.113.0/24']));
    const named = await webhookSender({ ...allowPrivate, resolve })(webhook(`http://hooks.example:${port}/hook`, ['127.0.0.2/32']));

    const skipped = {
      outcome: 'skipped',
      skipped: 'address_not_allowed',
      reason: "the receiver's address is outside the grant's allow list",
    };
    expect(literal).toEqual(skipped);
    expect(named).toEqual(skipped);
    expect(receiver.hits()).toBe(0);
  });

  it('when a name resolves to addresses inside and outside the allow list, then the connection is made only to one inside', async () => {
    const receiver = await target((_req, res) => res.writeHead(204).end());
    const port = new URL(receiver.url).port;
    // On the same port of another loopback address: were it connected to, the attempt would be answered all the same.
    const outside = await target((_req, res) => res.writeHead(204).end(), '127.0.0.2', Number(port));
    open.push(receiver, outside);
    const resolve: Resolve = () =>
      Promise.resolve([
        { address: '127.0.0.2', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    const sender = webhookSender({ ...allowPrivate, resolve });

    const inside = await sender(webhook(`http://hooks.example:${port}/hook`, ['127.0.0.1/32']));
    const unbounded = await sender(webhook(`http://hooks.example:${port}/hook`));

    expect(inside).toEqual({ outcome: 'answered', status: 204 });
    expect(unbounded).toEqual({ outcome: 'answered', status: 204 });
    // Bounded, the first address the name resolved to was passed over; unbounded, it was used.
    expect([receiver.hits(), outside.hits()]).toEqual([1, 1]);
  });

  it('when the connection is refused, then the attempt fails naming only the error code', async () => {
    const gone = await target(() => undefined);
    const { url } = gone;
    await gone.close();

    const outcome = await webhookSender(allowPrivate)(webhook(url));

    expect(outcome).toEqual({ outcome: 'failed', failure: 'connection_failed', reason: 'the connection failed (ECONNREFUSED)' });
  });
});
