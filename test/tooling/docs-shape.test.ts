import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCS_GLOBS, GUIDES_AT_THE_TOP, GUIDE_FOLDERS, lineCount, openingProblem, repoFiles } from '../support/docs';
import { REPO_ROOT } from '../support/embedded-process';

const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');

/**
 * The docs' shape: the README is a front page, each guide says first whom it is for and what it
 * covers, and every block marked to run belongs to a group CI runs.
 */
describe('the shape of the docs', () => {
  test('when the README is counted, then it is a front page of at most 300 lines', () => {
    expect(lineCount('README.md')).toBeLessThanOrEqual(300);
  });

  const guides = [...repoFiles(GUIDE_FOLDERS.map((folder) => `${folder}/**/*.md`)), ...GUIDES_AT_THE_TOP];

  test('when the guides are listed, then every reader has some', () => {
    for (const folder of GUIDE_FOLDERS)
      expect([folder, guides.filter((guide) => guide.startsWith(`${folder}/`)).length > 0]).toEqual([folder, true]);
  });

  test.each(guides)('when %s is opened, then it says first whom it is for and what it covers', (guide) => {
    expect(openingProblem(read(guide))).toBeNull();
  });

  test('when a guide opens otherwise, then the check says what is missing', () => {
    expect(openingProblem('Some text\n')).toBe('does not start with a title (# …)');
    expect(openingProblem('# A guide\n\nIt explains things.\n')).toBe(
      'its first paragraph does not start with who it is for ("**Who it is for:** …")',
    );
    expect(openingProblem('# A guide\n\n## Start\n\n**Who it is for:** operators.\n**What it covers:** backups.\n')).toBe(
      'its first paragraph does not start with who it is for ("**Who it is for:** …")',
    );
    expect(openingProblem('# A guide\n\n**Who it is for:** operators.\n\nIt is about backups.\n')).toBe(
      'its first paragraph does not say what it covers ("**What it covers:** …")',
    );
    expect(openingProblem('# A guide\n\n**Who it is for:** operators.\n**What it covers:** backups.\n')).toBeNull();
    expect(openingProblem('# A guide\n\nFor operators who restore data. It covers backups.\n')).toBeNull();
  });

  test('when the blocks marked to run are grouped, then each group is one CI runs, and scripts/ci/readme.sh finds them all', () => {
    const markers = repoFiles(['**/*.md']).flatMap((file) => [...read(file).matchAll(/^<!-- readme-run: (\S+) -->$/gm)].map((m) => m[1]!));
    const groups = [...new Set(markers)].sort();
    expect(groups).toEqual(['backup', 'distributed-local', 'walkthrough']);
    // Where each group runs: the front door runs the walkthrough and the backup, .ci/run the rest.
    expect(read('scripts/ci/front-door.sh')).toMatch(/readme\.sh" walkthrough /);
    expect(read('scripts/ci/front-door.sh')).toMatch(/readme\.sh" backup /);
    expect(read('.ci/run')).toMatch(/^bash scripts\/ci\/readme\.sh distributed-local$/m);
    for (const group of groups) {
      const script = execFileSync('bash', [join(REPO_ROOT, 'scripts/ci/readme.sh'), '--print', group], { encoding: 'utf8' });
      expect(script.length).toBeGreaterThan(0);
    }
    expect(repoFiles(DOCS_GLOBS)).toContain('README.md');
  });
});
