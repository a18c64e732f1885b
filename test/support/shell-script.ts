import { createRequire } from 'node:module';

// What a Bash script runs and what it installs, read from its syntax tree as mvdan/sh parses it (the
// parser of shfmt, through its JavaScript build), not from regular expressions over its text.

interface Word {
  Parts: Node[];
}
interface Node {
  Value?: string;
  /** A double-quoted string's parts. */
  Parts?: Node[];
  Name?: { Value: string };
  Args?: Word[];
  Array?: { Elems: { Value: Word }[] } | null;
}
interface Syntax {
  NewParser(): { Parse(source: string, name: string): unknown };
  Walk(node: unknown, visit: (node: Node | null) => boolean): void;
  NodeType(node: unknown): string;
}

const { syntax } = createRequire(__filename)('mvdan-sh') as { syntax: Syntax };

/**
 * Commands that run the command after their options (`nice -n 10 go build` runs go too), with those of
 * their options that take an argument (`env -u NAME`).
 */
const WRAPPERS = new Map<string, string[]>([
  ['command', []],
  ['env', ['-u', '-C', '-S']],
  ['exec', ['-a']],
  ['flock', ['-w', '-E', '-c']],
  ['nice', ['-n']],
  ['setsid', []],
  ['sudo', ['-u', '-g']],
  ['timeout', ['-s', '-k']],
  ['xargs', ['-I', '-n', '-P', '-d', '-L', '-s', '-E']],
]);

/** The word's text when it is literal throughout (`go`), undefined when it expands (`"$PROMTOOL"`). */
function literal(word: Word): string | undefined {
  let text = '';
  for (const part of word.Parts) {
    if (syntax.NodeType(part) !== 'Lit' || part.Value === undefined) return undefined;
    text += part.Value;
  }
  return text;
}

/** The literal text a word ends with (`"$SCRIPT_DIR/lib/common.sh"` → `/lib/common.sh`), inside quotes too. */
function literalEnding(parts: readonly Node[]): string {
  const last = parts[parts.length - 1];
  if (!last) return '';
  if (syntax.NodeType(last) === 'Lit') return last.Value ?? '';
  return last.Parts ? literalEnding(last.Parts) : '';
}

function walk(source: string, name: string, visit: (node: Node, type: string) => void): void {
  syntax.Walk(syntax.NewParser().Parse(source, name), (node) => {
    if (node) visit(node, syntax.NodeType(node));
    return true;
  });
}

export interface ScriptUse {
  /** Every command the script names in command position, wrappers' commands included, but not its own functions. */
  commands: Set<string>;
  /** The Debian packages it installs: `apt-get install` arguments, `apt_install PACKAGE...`, `*_PACKAGES=(...)`. */
  packages: Set<string>;
  /** The files it sources (`source "$ROOT/scripts/lib/common.sh"`), by the literal text their path ends with. */
  sources: Set<string>;
  /** The functions it defines. */
  functions: Set<string>;
}

export function scriptUse(source: string, name: string): ScriptUse {
  const functions = new Set<string>();
  const commands = new Set<string>();
  const packages = new Set<string>();
  const sources = new Set<string>();
  walk(source, name, (node, type) => {
    if (type === 'FuncDecl' && node.Name) functions.add(node.Name.Value);
    if (type === 'Assign' && node.Name?.Value.endsWith('PACKAGES') && node.Array) {
      for (const element of node.Array.Elems) addPackage(packages, literal(element.Value));
    }
    if (type !== 'CallExpr' || !node.Args) return;
    const words = node.Args.map(literal);
    for (let i = 0; i < words.length;) {
      const word = words[i];
      if (word === undefined) break;
      commands.add(word);
      const withArgument = WRAPPERS.get(word);
      if (!withArgument) break;
      i++;
      // Skip the wrapper's options (and their arguments), durations and assignments: `nice -n 10`,
      // `timeout 5s`, `env -u NAME A=b`.
      while (i < words.length && /^(-.*|\d+[a-z]?|[A-Za-z_][A-Za-z0-9_]*=.*)$/.test(words[i] ?? '')) {
        i += withArgument.includes(words[i] ?? '') ? 2 : 1;
      }
    }
    const apt = words.findIndex((word, i) => word === 'apt-get' && words[i + 1] === 'install');
    if (apt >= 0) for (const word of words.slice(apt + 2)) addPackage(packages, word);
    if (words[0] === 'apt_install') for (const word of words.slice(1)) addPackage(packages, word);
    if ((words[0] === 'source' || words[0] === '.') && node.Args[1]) sources.add(literalEnding(node.Args[1].Parts));
  });
  for (const fn of functions) commands.delete(fn);
  return { commands, packages, sources, functions };
}

function addPackage(packages: Set<string>, word: string | undefined): void {
  if (word !== undefined && !word.startsWith('-')) packages.add(word);
}
