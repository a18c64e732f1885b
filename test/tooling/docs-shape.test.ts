import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DECISIONS_FOLDER,
  DECISIONS_INDEX,
  DOCS_GLOBS,
  GUIDES_AT_THE_TOP,
  GUIDE_FOLDERS,
  citedDecisionNumbers,
  decisionIndexRows,
  decisionRecordProblem,
  decisionRecords,
  lineCount,
  openingProblem,
  repoFiles,
} from '../support/docs';
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

/**
 * The decision records (docs/decisions/): one short record per decision in one shape, all in the index,
 * numbered without gaps (the product owner's from 1, the team's from 101), so that "decision N" in code
 * always names the record docs/decisions/NNNN-*.md.
 */
describe('the decision records', () => {
  const records = decisionRecords();

  test.each(records.map((record) => record.file))('when %s is opened, then it has the shape of a record', (file) => {
    expect(decisionRecordProblem(file, read(file))).toBeNull();
  });

  test("when the records are numbered, then the product owner's run from 1 and the team's from 101, without gaps", () => {
    const numbers = records.map((record) => record.number);
    const productOwners = numbers.filter((n) => n < 100);
    const teams = numbers.filter((n) => n > 100);
    expect(productOwners.length).toBeGreaterThanOrEqual(57);
    expect(productOwners).toEqual(productOwners.map((_, i) => i + 1));
    expect(teams).toEqual(teams.map((_, i) => i + 101));
  });

  test('when the index is read, then it lists every record once, with its title and status', () => {
    const rows = decisionIndexRows(read(DECISIONS_INDEX));
    expect(rows.map(({ number, title, file, status }) => ({ number, title, file, status }))).toEqual(
      records.map(({ number, title, file, status }) => ({ number, title, file, status })),
    );
  });

  test('when the code cites a decision by number, then a record of that number exists', () => {
    const sources = repoFiles([
      'libs/**/*.ts',
      'services/**/*.ts',
      'tools/**/*.ts',
      'sdks/**/*.ts',
      'sdks/**/*.py',
      'test/**/*.ts',
      'bench/**/*.ts',
      'scripts/**/*.sh',
      'scripts/**/*.mjs',
      '.ci/run',
      'k8s/**/*.yaml',
      'deploy/**/*.yml',
    ]);
    const numbers = new Set(records.map((record) => record.number));
    const unresolved = sources.flatMap((file) =>
      citedDecisionNumbers(read(file))
        .filter((n) => !numbers.has(n))
        .map((n) => `${file}: decision ${n}`),
    );
    expect(sources.length).toBeGreaterThan(100);
    expect(unresolved).toEqual([]);
  });

  test('when a record is shaped otherwise, then the check says what is wrong', () => {
    const record = (title: string, rest = 'Status: Accepted\n\n## Context\n\nWhy.\n\n## Decision\n\nWhat.\n\n## Consequences\n\nHow.\n') =>
      `${title}\n\n${rest}`;
    expect(decisionRecordProblem(`${DECISIONS_FOLDER}/0007-scopes.md`, record('# 7. Scopes'))).toBeNull();
    expect(decisionRecordProblem(`${DECISIONS_FOLDER}/7-scopes.md`, record('# 7. Scopes'))).toBe('is not named NNNN-slug.md');
    expect(decisionRecordProblem(`${DECISIONS_FOLDER}/0007-scopes.md`, record('# Scopes'))).toBe('does not start with a title "# N. …"');
    expect(decisionRecordProblem(`${DECISIONS_FOLDER}/0007-scopes.md`, record('# 8. Scopes'))).toBe('its title says 8, its file 7');
    expect(decisionRecordProblem(`${DECISIONS_FOLDER}/0007-scopes.md`, record('# 7. Scopes', '## Context\n'))).toBe(
      'has no "Status: …" line',
    );
    expect(decisionRecordProblem(`${DECISIONS_FOLDER}/0007-scopes.md`, record('# 7. Scopes', 'Status: Maybe\n'))).toBe(
      'has an unknown status "Maybe"',
    );
    expect(
      decisionRecordProblem(`${DECISIONS_FOLDER}/0007-scopes.md`, record('# 7. Scopes', 'Status: Accepted\n\n## Decision\n\n## Context\n')),
    ).toBe('has the sections Decision, Context, not Context, Decision, Consequences');
    expect(citedDecisionNumbers('// Decision 29: a revoke … (decisions 26–28; see decision 5)')).toEqual([29, 26, 5]);
  });
});
