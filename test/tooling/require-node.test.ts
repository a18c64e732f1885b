import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

interface RequireNode {
  nodeVersionProblem(pkg: { name: string; engines?: { node?: string } }, version: string): string | undefined;
  main(version?: string): number;
}

const ROOT = join(__dirname, '..', '..');
const { nodeVersionProblem, main } = createRequire(__filename)('../../scripts/require-node.js') as RequireNode;
const pkg = (range: string) => ({ name: 'rsd', engines: { node: range } });

describe('scripts/require-node.js', () => {
  it('when the Node.js major is below the engines range, then one line names the range, this version and .node-version', () => {
    expect(nodeVersionProblem(pkg('>=26'), '20.20.2')).toBe('rsd needs Node.js >=26 (this is v20.20.2); see .node-version');
    expect(nodeVersionProblem(pkg('>=26'), 'v25.9.9')).toBe('rsd needs Node.js >=26 (this is v25.9.9); see .node-version');
  });

  it('when the version meets the range, then there is no problem', () => {
    for (const version of ['26.0.0', '26.10.0', '27.1.0', 'v30.0.0']) expect(nodeVersionProblem(pkg('>=26'), version)).toBeUndefined();
  });

  it('when the range has a minor and patch, then they count too', () => {
    expect(nodeVersionProblem(pkg('>=26.10'), '26.9.9')).toMatch(/needs Node.js >=26.10 \(this is v26.9.9\)/);
    expect(nodeVersionProblem(pkg('>= 26.10.1'), '26.10.0')).toMatch(/needs Node.js >= 26.10.1/);
    expect(nodeVersionProblem(pkg('>=26.10.1'), '26.10.1')).toBeUndefined();
    expect(nodeVersionProblem(pkg('>=26.10.1'), '26.11.0')).toBeUndefined();
  });

  it('when engines.node is missing or not a ">=" range, then that is the problem, whatever the version', () => {
    expect(nodeVersionProblem({ name: 'rsd' }, '26.10.0')).toMatch(/engines.node must read/);
    expect(nodeVersionProblem(pkg('^26'), '26.10.0')).toMatch(/engines.node must read ">=MAJOR\[.MINOR\[.PATCH\]\]", not "\^26"/);
  });

  it("when run for this repository, then .node-version meets package.json's range and Node.js 20 does not", () => {
    const nodeVersion = readFileSync(join(ROOT, '.node-version'), 'utf8').trim();
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(main(nodeVersion)).toBe(0);
      expect(stderr).not.toHaveBeenCalled();
      expect(main('20.20.2')).toBe(1);
      expect(stderr.mock.calls).toEqual([['resilience-score-data-api needs Node.js >=26 (this is v20.20.2); see .node-version\n']]);
    } finally {
      stderr.mockRestore();
    }
  });
});
