import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '@rsd/platform';
import { readApiConfigSchema } from '@rsd/read-api';
import { REPO_ROOT } from '../support/embedded-process';

const run = promisify(execFile);

describe('rsd signing-key', () => {
  test('when a signing key is made, then it is a key list the read API accepts as RESPONSE_SIGNING_KEYS, with the kid asked for', async () => {
    const { stdout } = await run('node', [join(REPO_ROOT, 'tools/cli/bin/rsd.js'), 'signing-key', '--kid', 'rsd-2026-11']);

    const config = loadConfig(readApiConfigSchema, { RESPONSE_SIGNING_KEYS: stdout.trim() });

    expect(config.RESPONSE_SIGNING_KEYS).toEqual([
      {
        kty: 'OKP',
        crv: 'Ed25519',
        x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        d: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        kid: 'rsd-2026-11',
      },
    ]);
  });

  test('when two keys are made, then they differ', async () => {
    const cli = join(REPO_ROOT, 'tools/cli/bin/rsd.js');
    const [first, second] = await Promise.all([run('node', [cli, 'signing-key']), run('node', [cli, 'signing-key'])]);

    expect(first.stdout).not.toBe(second.stdout);
  });
});
