import { ApiError, runCommand, type CommandDeps } from '@rsd/platform';
import type { Origin, StoredAuthorization } from '@rsd/domain';
import { authorizationRevoked } from '@rsd/domain';

const record = { clientId: 'rs_abcdefghijklmnop1234', organizationId: 'acme', revision: 1 } as unknown as StoredAuthorization;
const revoked = () =>
  authorizationRevoked(
    { ...record, revocationReason: 'organization', revokedAt: '2026-12-01T00:00:00.000Z', revision: 2 },
    { id: 'e1', time: new Date('2026-12-01T00:00:00Z') },
  );

function depsWhere(wins: (attempt: number) => boolean) {
  let attempts = 0;
  const written: string[] = [];
  const warn = jest.fn();
  const deps = {
    store: {
      update: jest.fn((_record: unknown, _revision: number, outbox: readonly { value: string }[]) => {
        attempts += 1;
        const won = wins(attempts);
        if (won) written.push(...outbox.map((entry) => entry.value));
        return Promise.resolve(won);
      }),
    },
    relay: { flush: () => Promise.resolve() },
    log: { warn },
  } as unknown as CommandDeps;
  return { deps, written, warn, attempts: () => attempts };
}

const revoke = { what: 'revoke', context: { clientId: record.clientId }, load: () => Promise.resolve(record) };
const decideRevoke = () => ({ write: { authorization: record, expectedRevision: 1, events: [revoked()] }, answer: 'done' });

describe('runCommand', () => {
  test('when a write loses to a concurrent change, then the record is loaded and decided again until it wins, then published', async () => {
    const { deps, attempts } = depsWhere((attempt) => attempt >= 3);

    const outcome = await runCommand(deps, undefined, { ...revoke, decide: decideRevoke });

    expect([outcome, attempts()]).toEqual([{ answer: 'done', publication: 'published' }, 3]);
  });

  test('when it keeps losing, then after five attempts it answers 503 and says so in the log', async () => {
    const { deps, warn, attempts } = depsWhere(() => false);

    const failing = runCommand(deps, undefined, { ...revoke, what: 'rotation', decide: decideRevoke });

    await expect(failing).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    await expect(failing).rejects.toBeInstanceOf(ApiError);
    expect(attempts()).toBe(5);
    expect(warn).toHaveBeenCalledWith({ clientId: record.clientId, attempts: 5 }, 'rotation kept losing to concurrent changes');
  });

  test('when someone asks for the change, then its events carry the action, the actor, the request and the address, never more', async () => {
    const { deps, written } = depsWhere(() => true);
    const origin: Origin = { actor: { type: 'person', id: 'https://idp|alice', via: 'cli' }, requestId: 'req-1', address: '203.0.113.9' };

    await runCommand(deps, origin, { ...revoke, decide: decideRevoke });

    expect(written.map((value) => (JSON.parse(value) as { data: { audit: unknown } }).data.audit)).toEqual([
      { action: 'authorization.revoked', actor: origin.actor, requestId: 'req-1', address: '203.0.113.9' },
    ]);
  });
});
