import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';

import { REPO_ROOT } from './embedded-process';

/** The Markdown the docs checks cover: the front page, the repository's own files and every guide. */
export const DOCS_GLOBS = ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'SECURITY.md', 'docs/**/*.md'];

/** The four readers' folders: every Markdown file in them is a guide. */
export const GUIDE_FOLDERS = ['docs/recipients', 'docs/organizations', 'docs/operators', 'docs/contributors'];

/** Guides kept at the top of docs/ (other files link to them there) that open like the others. */
export const GUIDES_AT_THE_TOP = ['docs/leaked-keys.md', 'docs/capacity.md'];

export const SCREENSHOTS = 'docs/screenshots';

/** One link or image of a Markdown file, as written, and where it is. */
export interface DocLink {
  file: string;
  line: number;
  href: string;
}

/** A link that does not resolve, and why. */
export interface BrokenLink extends DocLink {
  problem: string;
}

const markdown = new MarkdownIt({ html: true });

/** Files tracked or about to be (untracked but not ignored), matching the globs, as repository paths. */
export function repoFiles(globs: readonly string[], root = REPO_ROOT): string[] {
  const out = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...globs.map((glob) => `:(glob)${glob}`)],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  return [...new Set(out.split('\n').filter((path) => path !== '' && existsSync(join(root, path))))].sort();
}

// Anchors written in HTML (`<a id="…">`, `<a name="…">`), which GitHub keeps as they are.
const HTML_ANCHOR = /<a\s[^>]*(?:id|name)="([^"]+)"/g;
const HTML_LINK = /<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g;

/** The anchors GitHub makes for a Markdown file: each heading's slug (repeats numbered), and HTML ids. */
export function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const tokens = markdown.parse(text, {});
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const inline = tokens[i + 1];
    // GitHub slugs the heading's text as rendered: code spans and emphasis keep their text, links theirs.
    const rendered = (inline?.children ?? [])
      .filter((child) => child.type === 'text' || child.type === 'code_inline')
      .map((child) => child.content)
      .join('');
    anchors.add(slugger.slug(rendered));
  });
  for (const match of text.matchAll(HTML_ANCHOR)) anchors.add(match[1]!);
  return anchors;
}

/** Every link and image of a Markdown file (Markdown syntax or HTML), with its line. */
export function linksOf(file: string, text: string): DocLink[] {
  const links: DocLink[] = [];
  let line = 1;
  for (const block of markdown.parse(text, {})) {
    // Table cells have no line of their own: the table's (the last block that had one) stands for them.
    if (block.map) line = block.map[0] + 1;
    for (const token of [block, ...(block.children ?? [])]) {
      const href = token.type === 'link_open' ? token.attrGet('href') : token.type === 'image' ? token.attrGet('src') : null;
      if (href !== null) links.push({ file, line, href: String(href) });
      if (token.type === 'html_block' || token.type === 'html_inline') {
        for (const match of token.content.matchAll(HTML_LINK)) links.push({ file, line, href: match[1]! });
      }
    }
  }
  return links;
}

/** A link to another site, or to something that is not a file of this repository. */
export function isExternal(href: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//');
}

/** Where a relative link points, as a repository path, and its anchor ('' when none). */
export function resolveLink(link: DocLink): { path: string; anchor: string } {
  const hash = link.href.indexOf('#');
  const target = decodeURIComponent(hash === -1 ? link.href : link.href.slice(0, hash));
  const anchor = hash === -1 ? '' : decodeURIComponent(link.href.slice(hash + 1));
  const path = target === '' ? link.file : posix.normalize(posix.join(posix.dirname(link.file), target));
  return { path: path.replace(/\/$/, ''), anchor };
}

/** Checks every relative link of the files: the file or folder exists, in the repository, and so does the anchor. */
export function brokenLinks(files: readonly string[], root = REPO_ROOT): BrokenLink[] {
  const anchorsCache = new Map<string, Set<string>>();
  const anchors = (path: string): Set<string> => {
    let found = anchorsCache.get(path);
    if (!found) {
      found = anchorsOf(readFileSync(join(root, path), 'utf8'));
      anchorsCache.set(path, found);
    }
    return found;
  };
  const broken: BrokenLink[] = [];
  for (const file of files) {
    for (const link of linksOf(file, readFileSync(join(root, file), 'utf8'))) {
      if (isExternal(link.href)) continue;
      const { path, anchor } = resolveLink(link);
      if (path.startsWith('..') || relative(root, join(root, path)).startsWith('..')) {
        broken.push({ ...link, problem: 'points outside the repository' });
      } else if (!existsSync(join(root, path))) {
        broken.push({ ...link, problem: `no such file: ${path}` });
      } else if (anchor !== '') {
        if (statSync(join(root, path)).isDirectory() || !path.endsWith('.md')) {
          // GitHub's line anchors are the only ones a file that is not Markdown has.
          if (!/^L\d+(-L\d+)?$/.test(anchor)) broken.push({ ...link, problem: `no anchor #${anchor} in ${path}` });
        } else if (!anchors(path).has(anchor)) {
          broken.push({ ...link, problem: `no heading or anchor #${anchor} in ${path}` });
        }
      }
    }
  }
  return broken;
}

/** The files of docs/screenshots that no link or image of the files points at. */
export function unreferencedScreenshots(files: readonly string[], root = REPO_ROOT): string[] {
  const referenced = new Set(
    files.flatMap((file) =>
      linksOf(file, readFileSync(join(root, file), 'utf8'))
        .filter((link) => !isExternal(link.href))
        .map((link) => resolveLink(link).path),
    ),
  );
  return repoFiles([SCREENSHOTS], root).filter((path) => !referenced.has(path));
}

/** The first paragraph after a guide's title, or '' when the guide does not start with one. */
export function openingOf(text: string): { title: string; opening: string } {
  const tokens = markdown.parse(text, {});
  const first = tokens[0];
  if (first?.type !== 'heading_open' || first.tag !== 'h1') return { title: '', opening: '' };
  const title = tokens[1]?.content ?? '';
  const next = tokens[3];
  return { title, opening: next?.type === 'paragraph_open' ? (tokens[4]?.content ?? '') : '' };
}

/**
 * Why a guide's opening does not say who it is for and what it covers, or null when it does. The first
 * paragraph after the title starts with its readers (`**Who it is for:** …`, or a sentence "For …") and
 * says what it covers (a line `**What it covers:** …`, or "… covers …").
 */
export function openingProblem(text: string): string | null {
  const { title, opening } = openingOf(text);
  if (title === '') return 'does not start with a title (# …)';
  if (!/^(\*\*Who it is for:\*\* \S|For \S)/.test(opening))
    return 'its first paragraph does not start with who it is for ("**Who it is for:** …")';
  if (!/(\n\*\*What it covers:\*\* \S|\bcovers\b)/.test(opening))
    return 'its first paragraph does not say what it covers ("**What it covers:** …")';
  return null;
}

/** The file's lines, as `wc -l` counts them. */
export function lineCount(path: string, root = REPO_ROOT): number {
  return readFileSync(join(root, path), 'utf8').split('\n').length - 1;
}

/** The decision records: one file per decision, `docs/decisions/NNNN-slug.md`, and their index. */
export const DECISIONS_FOLDER = 'docs/decisions';
export const DECISIONS_INDEX = `${DECISIONS_FOLDER}/README.md`;

const RECORD_FILE = /^docs\/decisions\/(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;
/** A decision built in parts says which: `Accepted, audit trail built; reviews being built`. */
const RECORD_STATUS = /^(Accepted and built|Accepted, being built|Accepted, [a-z ]+ built; [a-z ]+ being built|Accepted|Superseded by .+)$/;
const RECORD_SECTIONS = ['Context', 'Decision', 'Consequences'];

/** A record as its file says it: its number (from the file's name), title and status. */
export interface DecisionRecord {
  file: string;
  number: number;
  title: string;
  status: string;
}

/** The number a record's file name gives it, or undefined for a file that is not named as a record. */
export function recordNumberOf(file: string): number | undefined {
  const match = RECORD_FILE.exec(file);
  return match ? Number(match[1]) : undefined;
}

/**
 * Why a record does not have the records' shape, or null when it does: named `NNNN-slug.md`, a title
 * `# N. …` with the file's number, a `Status:` line, then the sections Context, Decision and
 * Consequences, each once and in that order.
 */
export function decisionRecordProblem(file: string, text: string): string | null {
  const number = recordNumberOf(file);
  if (number === undefined) return 'is not named NNNN-slug.md';
  const lines = text.split('\n');
  const title = /^# (\d+)\. \S/.exec(lines[0] ?? '');
  if (!title) return 'does not start with a title "# N. …"';
  if (Number(title[1]) !== number) return `its title says ${title[1]}, its file ${number}`;
  const status = lines.find((line) => line.startsWith('Status: '))?.slice('Status: '.length);
  if (status === undefined) return 'has no "Status: …" line';
  if (!RECORD_STATUS.test(status)) return `has an unknown status "${status}"`;
  const sections = lines.filter((line) => line.startsWith('## ')).map((line) => line.slice(3));
  if (sections.join('|') !== RECORD_SECTIONS.join('|'))
    return `has the sections ${sections.join(', ') || 'none'}, not ${RECORD_SECTIONS.join(', ')}`;
  return null;
}

/** The records of the repository, as their files say them. */
export function decisionRecords(root = REPO_ROOT): DecisionRecord[] {
  return repoFiles([`${DECISIONS_FOLDER}/*.md`], root)
    .filter((file) => recordNumberOf(file) !== undefined)
    .map((file) => {
      const lines = readFileSync(join(root, file), 'utf8').split('\n');
      return {
        file,
        number: recordNumberOf(file)!,
        title: (lines[0] ?? '').replace(/^# \d+\. /, ''),
        status: lines.find((line) => line.startsWith('Status: '))?.slice('Status: '.length) ?? '',
      };
    });
}

/** The index's rows, `| N | [title](file) | status |` (padded or not), as the index lists them. */
export function decisionIndexRows(text: string): { number: number; title: string; file: string; status: string }[] {
  return [...text.matchAll(/^\|\s*(\d+)\s*\|\s*\[(.+?)\]\(([^)]+)\)\s*\|\s*(.+?)\s*\|$/gm)].map((m) => ({
    number: Number(m[1]),
    title: m[2]!,
    file: `${DECISIONS_FOLDER}/${m[3]!}`,
    status: m[4]!,
  }));
}

/** Every decision number a source file cites ("decision 29", "decisions 26–28" cites 26). */
export function citedDecisionNumbers(text: string): number[] {
  return [...text.matchAll(/\bdecisions? (\d+)\b/gi)].map((m) => Number(m[1]));
}
