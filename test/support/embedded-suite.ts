import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDevSecret, signDevToken } from '@rsd/platform';
import { startEmbedded, type EmbeddedProcess } from './embedded-process';
import { sharedFixture } from './shared-fixture';

/*
 * The setup most e2e suites share: the product started (`npm start`) on a data directory of the
 * suite's own, a development token from the secret it wrote there, and both gone afterwards.
 */

export interface EmbeddedOnDataDir {
  dataDir: string;
  product: EmbeddedProcess;
}

/**
 * A new directory under the system's temp dir, named from `prefix`, and the product started on it
 * (LOG_LEVEL info, unless `env` says finer: startEmbedded waits for its ready line).
 */
export async function startEmbeddedOnNewDataDir(prefix: string, env: Record<string, string> = {}): Promise<EmbeddedOnDataDir> {
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  try {
    return { dataDir, product: await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env }) };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** For afterAll: stops the product if it started, then removes its data directory. */
export async function stopAndRemove(product: EmbeddedProcess | undefined, dataDir: string | undefined): Promise<void> {
  await product?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}

/** An administrator's token for `org` (both write scopes), signed with the development secret the product created in `dataDir`. */
export async function devTokenFor(dataDir: string, org: string): Promise<string> {
  const secret = await readDevSecret(dataDir);
  if (!secret) throw new Error(`the embedded runtime did not create its development secret in ${dataDir}`);
  return signDevToken(secret, { org, scope: 'authorizations:write scores:write' });
}

/** The product a file's tests share, read inside the tests (it is there once `beforeAll` has run). */
export interface EmbeddedSuite {
  readonly product: EmbeddedProcess;
  readonly dataDir: string;
  /** An administrator's token for `org`, as `devTokenFor` makes it. */
  tokenFor(org: string): Promise<string>;
  /** What the shared scenarios take of a product: its services' URLs (its one read API among `readApis`) and tokens. */
  target(): EmbeddedProcess['urls'] & { readApis: string[]; tokenFor(org: string): Promise<string> };
}

/**
 * The setup above as a file's hooks: the product started before its tests on a new data directory (`prefix`, `env`), and stopped with its directory removed after them.
 */
export function embeddedSuite(prefix: string, env: Record<string, string> = {}): EmbeddedSuite {
  const current = sharedFixture(
    () => startEmbeddedOnNewDataDir(prefix, env),
    (started) => stopAndRemove(started?.product, started?.dataDir),
    { start: 90_000 },
  );
  const tokenFor = (org: string) => devTokenFor(current().dataDir, org);
  return {
    get product() {
      return current().product;
    },
    get dataDir() {
      return current().dataDir;
    },
    tokenFor,
    target: () => ({ ...current().product.urls, readApis: [current().product.urls.readApi], tokenFor }),
  };
}
