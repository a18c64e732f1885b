import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

interface RequireNode {
  nodeVersionProblem(name: string, pinned: string, version: string): string | undefined;
  main(version?: string): number;
}

const ROOT = join(__dirname, '..', '..');
const { nodeVersionProblem, main } = createRequire(__filename)('../../scripts/require-node.js') as RequireNode;

describe('scripts/require-node.js', () => {
  it("when the Node.js major is below .node-version's, then one line names both and says to run through npm", () => {
    expect(nodeVersionProblem('rsd', '26.10.0\n', '20.20.2')).toBe(
      'rsd runs on Node.js 26 (.node-version: 26.10.0; this is v20.20.2): run it through npm (npm start, npm test, npx rsd), which uses the Node.js that npm install brought',
    );
    expect(nodeVersionProblem('rsd', '26.10.0', 'v25.9.9')).toMatch(/this is v25\.9\.9\)/);
  });

  it('when the major is the pinned one or later, then there is no problem (a patch or minor apart is fine)', () => {
    for (const version of ['26.0.0', '26.10.0', '27.1.0', 'v30.0.0']) expect(nodeVersionProblem('rsd', '26.10.0', version)).toBeUndefined();
  });

  it('when .node-version names no version, then that is the problem, whatever the version', () => {
    expect(nodeVersionProblem('rsd', 'lts/*', '26.10.0')).toMatch(/\.node-version must name a version/);
  });

  it('when run for this repository, then .node-version passes and Node.js 20 does not', () => {
    const nodeVersion = readFileSync(join(ROOT, '.node-version'), 'utf8').trim();
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(main(nodeVersion)).toBe(0);
      expect(stderr).not.toHaveBeenCalled();
      expect(main('20.20.2')).toBe(1);
      expect(String(stderr.mock.calls[0]?.[0])).toMatch(/^resilience-score-data-api runs on Node.js 26 /);
    } finally {
      stderr.mockRestore();
    }
  });

  it('when the install ran, then the node that npm scripts find first is the one .node-version pins', () => {
    // jest runs under npm test, whose PATH starts with node_modules/.bin: decision 35's mechanism.
    const pinned = readFileSync(join(ROOT, '.node-version'), 'utf8').trim();
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    expect(lock.packages['node_modules/node']?.version).toBe(pinned);
  });
});
