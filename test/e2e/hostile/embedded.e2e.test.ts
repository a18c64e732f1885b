import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbedded } from '../../support/embedded-process';
import { hostileClientTests } from './hostile-client-suite';

describe('a hostile client against the embedded runtime (npm start)', () => {
  hostileClientTests(async (env) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'rsd-hostile-'));
    const product = await startEmbedded({ DATA_DIR: dataDir, ...env });
    return {
      urls: product.urls,
      stop: async () => {
        await product.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  });
});
