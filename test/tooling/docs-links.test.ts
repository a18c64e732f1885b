import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { DOCS_GLOBS, anchorsOf, brokenLinks, linksOf, repoFiles, unreferencedScreenshots } from '../support/docs';
import { REPO_ROOT } from '../support/embedded-process';

/**
 * The docs as a reader follows them: every relative link and anchor of the front page, the
 * repository's own Markdown files and every guide resolves to a file of the repository (and a heading
 * or anchor there), and every screenshot is shown somewhere. Links to other sites are not followed:
 * CI has no network to check them with.
 */
describe('the links of the docs', () => {
  const files = repoFiles(DOCS_GLOBS);

  test('when the docs are listed, then the front page and the guides of every reader are among them', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/decisions/README.md']));
    for (const reader of ['recipients', 'organizations', 'operators', 'contributors']) {
      expect(files.some((file) => file.startsWith(`docs/${reader}/`))).toBe(true);
    }
  });

  test('when every relative link and anchor is followed, then each resolves', () => {
    const links = files.flatMap((file) => linksOf(file, readRepo(file)));
    expect(links.length).toBeGreaterThan(100);
    expect(brokenLinks(files).map(({ file, line, href, problem }) => `${file}:${line} ${href}: ${problem}`)).toEqual([]);
  });

  test('when the screenshots are listed, then every one is shown by the docs', () => {
    expect(repoFiles(['docs/screenshots']).length).toBeGreaterThan(0);
    expect(unreferencedScreenshots(files)).toEqual([]);
  });
});

describe('the link checker', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'docs-links-'));
    execFileSync('git', ['init', '--quiet'], { cwd: root });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  test('when a link names a missing file, a missing heading or leaves the repository, then each is reported', () => {
    write('README.md', '# Front\n\nSee [the guide](docs/guide.md#the-setup) and [gone](docs/gone.md).\n');
    write('docs/guide.md', '# Guide\n\n## Set-up\n\n[up](../../elsewhere.md) [back](../README.md#front)\n');
    const problems = brokenLinks(repoFiles(DOCS_GLOBS, root), root).map(({ file, href, problem }) => `${file} ${href}: ${problem}`);
    expect(problems).toEqual([
      'README.md docs/guide.md#the-setup: no heading or anchor #the-setup in docs/guide.md',
      'README.md docs/gone.md: no such file: docs/gone.md',
      'docs/guide.md ../../elsewhere.md: points outside the repository',
    ]);
  });

  test('when links are right, then nothing is reported, whatever the headings hold', () => {
    write(
      'README.md',
      '# Front\n\n## `rsd` and *more*: 2.0 (beta)\n\n## Twice\n\n## Twice\n\n' +
        '[a](#rsd-and-more-20-beta) [b](#twice-1) [c](docs/) [d](https://example.com/x.md#nowhere) [e](scripts/x.sh#L3)\n' +
        '<a id="kept"></a>[f](#kept) <img src="docs/screenshots/a.png" alt="a">\n',
    );
    write('scripts/x.sh', 'true\n');
    write('docs/screenshots/a.png', '');
    write('docs/screenshots/b.png', '');
    const files = repoFiles(DOCS_GLOBS, root);
    expect(brokenLinks(files, root)).toEqual([]);
    expect([...anchorsOf(readFrom(root, 'README.md'))]).toEqual(['front', 'rsd-and-more-20-beta', 'twice', 'twice-1', 'kept']);
    expect(unreferencedScreenshots(files, root)).toEqual(['docs/screenshots/b.png']);
  });
});

function readRepo(path: string): string {
  return readFrom(REPO_ROOT, path);
}

function readFrom(root: string, path: string): string {
  return readFileSync(join(root, path), 'utf8');
}
