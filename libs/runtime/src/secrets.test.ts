import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@rsd/platform';
import type { SecretSpec } from '@rsd/ports';
import { resolveSecrets } from './secrets';

const silent = createLogger('test', 'silent');
const SIGNING: SecretSpec = {
  variable: 'RESPONSE_SIGNING_KEYS',
  file: 'signing-keys.json',
  generate: () => 'generated',
  requiredBecause: 'replicas sign with the same keys',
};

describe('resolveSecrets: a service secret from a mounted file', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'secrets-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('when <VARIABLE>_FILE names a file, then its content is the secret, on a runtime without a data directory', async () => {
    const path = join(dir, 'mounted');
    writeFileSync(path, '[{"kid":"k"}]\n');

    const { env, created } = await resolveSecrets([SIGNING], { RESPONSE_SIGNING_KEYS_FILE: path }, undefined, silent);

    expect(env.RESPONSE_SIGNING_KEYS).toBe('[{"kid":"k"}]');
    expect(created).toEqual([]);
  });

  test('when the file cannot be read, then the start is refused naming the variable and the path', async () => {
    await expect(resolveSecrets([SIGNING], { RESPONSE_SIGNING_KEYS_FILE: join(dir, 'absent') }, undefined, silent)).rejects.toThrow(
      `RESPONSE_SIGNING_KEYS_FILE: ${join(dir, 'absent')} cannot be read (ENOENT)`,
    );
  });
});
