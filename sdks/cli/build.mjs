// Bundles the published CLI into one file with no runtime dependency (decision 57): tools/cli's published entry with
// the TypeScript SDK, commander and smol-toml inside, so that the tarball installs with no registry (the SDK is on
// none). Of the product's internals only what the CLI itself uses comes in: the development token's signing
// (libs/platform/src/dev-tokens.ts) and the contracts' webhook payload schema and key prefixes. Run by `npm pack`
// (prepack), after `npx tsc -b` at the repository's root (the SDK is bundled from its dist).
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * @rsd/platform as the CLI uses it: the modules that hold what it imports (the development token, the webhook
 * signature, the listener's HTTP server and error body), not its index, which brings the services' stack along.
 */
const platformParts = {
  name: 'platform-parts',
  setup(build) {
    build.onResolve({ filter: /^@rsd\/platform$/ }, () => ({ path: 'platform-parts', namespace: 'platform-parts' }));
    build.onLoad({ filter: /.*/, namespace: 'platform-parts' }, () => ({
      resolveDir: `${root}libs/platform/src`,
      loader: 'ts',
      contents: [
        "export { signDevToken, readDevSecret } from './dev-tokens';",
        "export { WEBHOOK_HEADERS, signWebhook, verifyWebhook } from './webhook-signature';",
        "export { listen, portOf, closeServer } from './http-server';",
        "export { errorBody } from './errors';",
      ].join('\n'),
    }));
  },
};

export const result = await build({
  entryPoints: [`${root}tools/cli/src/published.ts`],
  outfile: fileURLToPath(new URL('dist/rsd.js', import.meta.url)),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20.19',
  banner: { js: '#!/usr/bin/env node' },
  plugins: [platformParts],
  // The contracts from their source, so that only the schemas the CLI uses (and the parts of zod they need) come in;
  // a subpath (`@rsd/contracts/event-names`) is the source module of that name.
  alias: {
    '@rsd/contracts/event-names': `${root}libs/contracts/src/event-names.ts`,
    '@rsd/contracts': `${root}libs/contracts/src/index.ts`,
  },
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});
const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
console.log(`[sdks/cli] dist/rsd.js: ${Math.round(bytes / 1024)} KiB`);
