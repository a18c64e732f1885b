import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/**
 * No import circle in libs/: each library's modules, and the libraries among themselves, form a tree
 * one can read from the leaves up (a circle makes "which loads first" an accident of the entry point,
 * and two modules that need each other are one module in two files). Every import counts, type-only
 * ones too: a type shared both ways is a concept that belongs to neither side.
 */

const ROOT = join(__dirname, '..', '..');
const LIBS = join(ROOT, 'libs');

/** Every TypeScript source below `dir`, tests included (no build output, no declarations). */
function sourcesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourcesBelow(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The module a specifier names, when it is one of libs/*\/src (a relative path, or a library by its package name). */
function resolveImport(from: string, specifier: string): string | undefined {
  const library = /^@rsd\/([a-z-]+)$/.exec(specifier);
  const base = library ? join(LIBS, library[1]!, 'src', 'index') : specifier.startsWith('.') ? join(dirname(from), specifier) : undefined;
  if (base === undefined) return undefined;
  const stem = base.replace(/\.js$/, '');
  return [`${stem}.ts`, join(stem, 'index.ts')].find((candidate) => existsSync(candidate) && candidate.startsWith(LIBS));
}

/** The import graph of every module in libs/*\/src: module → the modules it imports (and re-exports). */
export function libsImportGraph(): Map<string, string[]> {
  const modules = readdirSync(LIBS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(LIBS, entry.name, 'src')))
    .flatMap((entry) => sourcesBelow(join(LIBS, entry.name, 'src')));
  return new Map(
    modules.map((module) => {
      const { importedFiles } = ts.preProcessFile(readFileSync(module, 'utf8'), true, true);
      const targets = importedFiles.map(({ fileName }) => resolveImport(module, fileName)).filter((target) => target !== undefined);
      return [module, [...new Set(targets)]];
    }),
  );
}

/** The graph's circles: each strongly connected component of more than one module, or a module importing itself (Tarjan). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (module: string): void => {
    index.set(module, index.size);
    lowLink.set(module, index.get(module)!);
    stack.push(module);
    onStack.add(module);
    for (const target of graph.get(module) ?? []) {
      if (!index.has(target)) {
        visit(target);
        lowLink.set(module, Math.min(lowLink.get(module)!, lowLink.get(target)!));
      } else if (onStack.has(target)) {
        lowLink.set(module, Math.min(lowLink.get(module)!, index.get(target)!));
      }
    }
    if (lowLink.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    if (component.length > 1 || graph.get(module)?.includes(module)) circles.push(component.sort());
  };
  for (const module of graph.keys()) if (!index.has(module)) visit(module);
  return circles;
}

describe('imports in libs/', () => {
  it('the circle finder finds a circle through three modules and a module importing itself, and none in a tree', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c', 'd']],
      ['c', ['a']],
      ['d', []],
      ['e', ['e', 'd']],
    ]);
    expect(importCircles(graph)).toEqual(expect.arrayContaining([['a', 'b', 'c'], ['e']]));
    expect(importCircles(graph)).toHaveLength(2);
    expect(
      importCircles(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('the graph holds the imports it should: a relative one, a type-only one, and a library by its package name', () => {
    const graph = libsImportGraph();
    const importsOf = (module: string) => (graph.get(join(LIBS, module)) ?? []).map((target) => relative(LIBS, target));
    expect(importsOf('domain/src/alerts/grant-alerts.ts')).toEqual(
      expect.arrayContaining(['domain/src/alerts/alert-state.ts', 'domain/src/authorizations/authorization-record.ts']),
    );
    expect(importsOf('domain/src/authorizations/authorization-record.ts')).toContain('domain/src/alerts/alert-state.ts');
    expect(importsOf('domain/src/alerts/alert-state.ts')).toContain('contracts/src/index.ts');
  });

  it('no module in libs/*/src imports itself back through others', () => {
    const circles = importCircles(libsImportGraph()).map((circle) => circle.map((module) => relative(ROOT, module)));
    expect(circles).toEqual([]);
  });
});
