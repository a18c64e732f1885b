import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aScoreSubmission } from '@rsd/testkit';
import { eventLogValues, eventually, rsdCreateArgs, runRsd } from '../support/embedded-process';
import * as orgAdmin from '../support/organization-admin';
import { embeddedSuite } from '../support/embedded-suite';
import { keyAuthorityScenarios } from '../support/key-authority-scenarios';
import {
  grantWebhookAddressScenarios,
  portfolioScenarios,
  portfolioSecrets,
  portfolioWebhookScenarios,
  type PortfolioWebhookTarget,
} from '../support/portfolio-scenarios';

const ACCOUNT_LIMIT = 300;

// Every request comes from 127.0.0.1: the refused keys below must not reach the per-address limit.
const suite = embeddedSuite('rsd-portfolio-', {
  FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
  ACCOUNT_RATE_LIMIT_PER_MINUTE: String(ACCOUNT_LIMIT),
  // The receivers of the portfolio's webhooks are on loopback: decision 28's development flag.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  // One proxy hop trusted: a grant limited to other addresses has its webhook made from one it names in X-Forwarded-For.
  TRUST_PROXY_HOPS: '1',
});

const scenarios = portfolioScenarios(() => ({ ...suite.target(), accountLimitPerMinute: ACCOUNT_LIMIT }));

/** The real `rsd` bin, with the given environment on top of the suite's; never throws. */
function rsd(args: string[], env: Record<string, string> = {}) {
  const { readApi, credentials } = suite.product.urls;
  return runRsd(args, { DATA_DIR: suite.dataDir, RSD_API_URL: readApi, RSD_CREDENTIALS_URL: credentials, RSD_API_KEY: '', ...env });
}

/** `export NAME='value'` lines as a map. */
const exported = (stdout: string) => new Map([...stdout.matchAll(/^export (\w+)='([^']*)'$/gm)].map(([, name, value]) => [name, value]));

const webhookTarget = (): PortfolioWebhookTarget => ({
  ...suite.target(),
  receiverHost: '127.0.0.1',
  accountLimitPerMinute: ACCOUNT_LIMIT,
});

const webhookScenarios = portfolioWebhookScenarios(webhookTarget);
const grantWebhookScenarios = grantWebhookAddressScenarios(webhookTarget);
const keyAuthority = keyAuthorityScenarios(webhookTarget);
afterAll(() => keyAuthority.cleanUp());

describe('portfolios (decision 42) on the embedded runtime', () => {
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);
  for (const [name, scenario] of Object.entries(webhookScenarios)) test(name, scenario, 120_000);
  for (const [name, scenario] of Object.entries(grantWebhookScenarios)) test(name, scenario, 120_000);

  describe('authority follows the live key (decision 50)', () => {
    for (const [name, scenario] of Object.entries(keyAuthority.scenarios)) test(name, scenario, 120_000);
  });

  test('when a recipient uses rsd: claims into a new portfolio, accepts one offer and declines another, trusts organizations, reads every score, rotates its key and leaves a grant', async () => {
    const [first, second] = ['cli-pf-one', 'cli-pf-two'];
    for (const [org, score] of [
      [first, 61],
      [second, 47],
    ] as const) {
      await orgAdmin.postScore(suite.product.urls.scoreIngest, await suite.tokenFor(org), aScoreSubmission({ organizationId: org, score }));
    }
    const link = exported((await rsd(rsdCreateArgs(first, 'auditor', 'qr_score', '--key-delivery', 'claim-link', '--env'))).stdout).get(
      'RSD_CLAIM_URL',
    );
    expect(link).toBeDefined();
    portfolioSecrets.push(link?.split('/').pop() ?? '');

    const claimed = await rsd(['claim', link ?? '', '--into-portfolio', '--account-name', 'CLI book', '--env']);
    expect(claimed.code).toBe(0);
    expect(claimed.stderr).toContain('shown only this once');
    const account = exported(claimed.stdout);
    const accountKey = account.get('RSD_API_KEY') ?? '';
    expect(accountKey).toMatch(/^rsa_/);
    portfolioSecrets.push(accountKey);
    const accountId = account.get('RSD_ACCOUNT_ID') ?? '';

    // `rsd authorizations create` of an auditor grant of `second` offered to the account; `tail` replaces its `--account-id`.
    const offerArgs = (tail = ['--account-id', accountId]) =>
      rsdCreateArgs(second, 'auditor', 'qr_score', '--key-delivery', 'account', ...tail);
    const direct = await rsd(offerArgs());
    expect(direct.code).toBe(0);
    const offered = JSON.parse(direct.stdout) as { clientId: string; status: string; recipientAccountName: string | null };
    expect(offered).toMatchObject({ status: 'pending', recipientAccountName: null });
    const directId = offered.clientId;
    // Without --account-id: a usage error.
    expect(await rsd(offerArgs([]))).toMatchObject({ code: 2 });

    const asRecipient = { RSD_API_KEY: accountKey };
    // Offered, the grant waits for the account: listed, then accepted; a second offer declined.
    const offers = await rsd(['portfolio', 'offers', 'list'], asRecipient);
    expect(offers.code).toBe(0);
    expect((JSON.parse(offers.stdout) as { items: { clientId: string }[] }).items.map((item) => item.clientId)).toEqual([directId]);
    const accepted = await rsd(['portfolio', 'offers', 'accept', '--client-id', directId], asRecipient);
    expect(accepted).toMatchObject({ code: 0 });
    expect(JSON.parse(accepted.stdout)).toMatchObject({ clientId: directId, organizationId: second });
    const another = await rsd(offerArgs());
    const declinedId = (JSON.parse(another.stdout) as { clientId: string }).clientId;
    expect(await rsd(['portfolio', 'offers', 'decline', '--client-id', declinedId], asRecipient)).toMatchObject({ code: 0 });
    expect(await rsd(['portfolio', 'offers', 'accept', '--client-id', declinedId], asRecipient)).toMatchObject({ code: 1 });
    const trusted = await rsd(['portfolio', 'auto-accept', '--organizations', `${second},${first}`], asRecipient);
    expect(JSON.parse(trusted.stdout)).toEqual({ organizationIds: [second, first] });
    expect(JSON.parse((await rsd(['portfolio', 'auto-accept'], asRecipient)).stdout)).toEqual({ organizationIds: [second, first] });
    expect(JSON.parse((await rsd(['portfolio', 'auto-accept', '--none'], asRecipient)).stdout)).toEqual({ organizationIds: [] });
    const shown = await eventually(async () => {
      const answer = await rsd(['portfolio', 'show'], asRecipient);
      return answer.code === 0 && (JSON.parse(answer.stdout) as { customers: number }).customers === 2 ? answer : undefined;
    });
    expect(JSON.parse(shown.stdout)).toEqual({ accountId, name: 'CLI book', customers: 2 });
    const scores = await rsd(['portfolio', 'scores', '--all'], asRecipient);
    expect((JSON.parse(scores.stdout) as { items: { score: number }[] }).items.map((item) => item.score).sort()).toEqual([47, 61]);
    expect(JSON.parse(scores.stdout)).toMatchObject({ leftOut: { addressNotAllowed: 0 } });

    // A routine rotation: the old key only reads, so it cannot leave a grant (decision 50); --env hands on the new one.
    const routine = await rsd(['portfolio', 'rotate-key', '--overlap', '1h', '--env'], asRecipient);
    expect(routine.code).toBe(0);
    const routineKey = exported(routine.stdout).get('RSD_API_KEY') ?? '';
    expect(routineKey).toMatch(/^rsa_/);
    portfolioSecrets.push(routineKey);
    const refused = await rsd(['portfolio', 'leave', '--client-id', directId], asRecipient);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('KEY_READ_ONLY');
    const rotated = await rsd(['portfolio', 'rotate-key', '--overlap', '0'], { RSD_API_KEY: routineKey });
    expect(rotated.code).toBe(0);
    const newKey = (JSON.parse(rotated.stdout) as { accountKey: string }).accountKey;
    portfolioSecrets.push(newKey);
    await eventually(async () => ((await rsd(['portfolio', 'show'], asRecipient)).code === 1 ? true : undefined));
    expect(await rsd(['portfolio', 'leave', '--client-id', directId], { RSD_API_KEY: newKey })).toMatchObject({ code: 0 });
    await eventually(async () => {
      const answer = await rsd(['portfolio', 'customers'], { RSD_API_KEY: newKey });
      return answer.code === 0 && (JSON.parse(answer.stdout) as { items: unknown[] }).items.length === 1 ? true : undefined;
    });
  }, 120_000);

  test('when the run is over, then no account key or claim token is in the output, the event log or any file of the data directory', async () => {
    const files = (await readdir(suite.dataDir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    const stored = await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')));
    const haystacks = [suite.product.output(), eventLogValues(suite.dataDir).join('\n'), ...stored];
    expect(portfolioSecrets.length).toBeGreaterThanOrEqual(10);
    for (const secret of portfolioSecrets) for (const haystack of haystacks) expect(haystack.includes(secret)).toBe(false);
  });
});
