import { randomUUID } from 'node:crypto';
import { eventually } from '../support/embedded-process';
import { embeddedSuite } from '../support/embedded-suite';
import { runRsd, type CliOutcome } from '../support/rsd-cli';

const suite = embeddedSuite('rsd-offboard-');

/** What a command printed on stdout as JSON, once it succeeded with nothing on stderr. */
function json(outcome: CliOutcome): Record<string, unknown> {
  expect(outcome).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(outcome.stdout) as Record<string, unknown>;
}

describe('rsd organizations, rsd authorizations erase and rsd portfolio erase (decision 56) against the embedded runtime', () => {
  test('when a recipient and an account erase their data and the organization is offboarded with rsd, then each prints what the API answers, the offboarding is followed to done, and a --confirm other than --org exits 2 with nothing sent', async () => {
    const org = `cli-offboard-${randomUUID().slice(0, 8)}`;
    // The CLI mints its own tokens from the runtime's development secret, as on a developer's machine.
    const env = { RSD_CREDENTIALS_URL: suite.product.urls.credentials, RSD_API_URL: suite.product.urls.readApi, DATA_DIR: suite.dataDir };
    const rsd = (...args: string[]) => runRsd(args, env);
    /** A grant of the organization, made with rsd: `extra` says who it is for or how its key is delivered. */
    const create = async (recipientType: string, ...extra: string[]) =>
      json(await rsd('authorizations', 'create', '--org', org, '--recipient-type', recipientType, '--scopes', 'qr_score', ...extra));
    const grant = await create('auditor', '--recipient-name', 'Ada Lovelace');
    const clientId = grant.clientId as string;

    // A grant's recipient: its name goes, the grant stays active.
    expect(json(await rsd('authorizations', 'erase', '--org', org, '--client-id', clientId))).toEqual({
      subject: `grant:${clientId}`,
      erasedAt: expect.any(String),
    });
    expect(json(await rsd('authorizations', 'get', '--org', org, '--client-id', clientId))).toMatchObject({
      recipientName: null,
      status: 'active',
    });

    // A recipient account, made by claiming a link into a portfolio, erases its own data with its key.
    const offered = await create('partner', '--key-delivery', 'claim-link');
    const claimUrl = (offered.claim as { url: string }).url;
    const claimed = await rsd('claim', claimUrl, '--into-portfolio', '--account-name', 'Ada Books');
    expect(claimed).toMatchObject({ code: 0, stderr: 'rsd: the account key is shown only this once; keep it now\n' });
    const account = JSON.parse(claimed.stdout) as { accountId: string; accountKey: string };
    expect(json(await runRsd(['portfolio', 'erase'], { ...env, RSD_API_KEY: account.accountKey }))).toEqual({
      subject: `account:${account.accountId}`,
      erasedAt: expect.any(String),
    });

    // Not confirmed: wrong usage, nothing sent (there is still no offboarding to show).
    const unconfirmed = await rsd('organizations', 'offboard', '--org', org, '--confirm', `${org}-not`);
    expect(unconfirmed).toMatchObject({ code: 2, stdout: '' });
    expect(unconfirmed.stderr).toMatch(/^rsd: --confirm must repeat --org exactly/);
    const none = await rsd('organizations', 'offboarding', '--org', org);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^rsd: 404 OFFBOARDING_NOT_FOUND: .+ \(request id [A-Za-z0-9._-]+\)\n$/);

    const started = await rsd('organizations', 'offboard', '--org', org, '--confirm', org);

    expect(started.code).toBe(0);
    const offboarding = JSON.parse(started.stdout) as { status: string; startedAt: string };
    expect(offboarding).toMatchObject({ status: expect.stringMatching(/^(pending|done)$/), startedAt: expect.any(String) });
    const done = await eventually(async () => {
      const now = json(await rsd('organizations', 'offboarding', '--org', org));
      return now.status === 'done' ? now : undefined;
    }, 60_000);
    expect(done).toEqual({ status: 'done', startedAt: offboarding.startedAt, doneAt: expect.any(String) });
    const gone = await rsd('authorizations', 'get', '--org', org, '--client-id', clientId);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^rsd: 404 AUTHORIZATION_NOT_FOUND: /);
  }, 120_000);
});
