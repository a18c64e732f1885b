import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// Decision 51: the console has no store, no event log and no secret of another service. What it may
// import says so: no store or engine adapter, no runtime beyond the runner its main.ts starts, no other
// service's code; from the ports only the shapes a service declares itself with.

const SRC = __dirname;
const SERVICE = resolve(SRC, '..');

/** Packages that hold or reach a store, an event log or another service's internals. */
const FORBIDDEN = [
  /^@rsd\/(embedded|mongo|kafka|redis|consumers|recipient-access|domain|credentials|notifier|read-api|score-ingest|testkit)(\/|$)/,
  /^(mongodb|kafkajs|ioredis|better-sqlite3|node:sqlite)$/,
];
/** The runner: only the process's entry point starts it (it opens no engine for a service that needs none). */
const RUNTIME = /^@rsd\/runtime(\/|$)/;
/** From the ports, a service's own declaration and a clock; nothing that stores or carries events. */
const PORT_NAMES_ALLOWED = new Set(['ServiceDefinition', 'RunningService', 'SecretSpec', 'Clock']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

interface Import {
  file: string;
  from: string;
  names: string[];
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const found: Import[] = [];
  for (const match of text.matchAll(/\bimport\s+(?:type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    const names = (match[1] ?? '')
      .replace(/[{}]/g, ' ')
      .split(/[\s,]+/)
      .filter((name) => /^[A-Za-z_]/.test(name) && name !== 'type' && name !== 'as');
    found.push({ file: relative(SERVICE, file), from: match[2] ?? match[3] ?? '', names });
  }
  return found;
}

const everyImport = sources(SRC).flatMap(importsOf);

describe('the console is a client of the APIs (decision 51)', () => {
  test('its sources were read: the check below looks at something', () => {
    expect(everyImport.length).toBeGreaterThan(50);
    expect(everyImport).toContainEqual(expect.objectContaining({ from: '@rsd/platform' }));
  });

  test('it imports no store, engine adapter or other service', () => {
    expect(everyImport.filter(({ from }) => FORBIDDEN.some((pattern) => pattern.test(from)))).toEqual([]);
  });

  test('only its main.ts imports the runtime (the runner)', () => {
    expect(everyImport.filter(({ from, file }) => RUNTIME.test(from) && file !== join('src', 'main.ts'))).toEqual([]);
  });

  test('no import leaves the service: no other service reached by a relative path', () => {
    const leaving = everyImport.filter(
      ({ from, file }) => from.startsWith('.') && !resolve(SERVICE, dirname(file), from).startsWith(join(SERVICE, 'src')),
    );
    expect(leaving).toEqual([]);
  });

  test('from the ports it takes only its own declaration and a clock', () => {
    const portNames = everyImport
      .filter(({ from }) => from === '@rsd/ports')
      .flatMap(({ file, names }) => names.map((name) => ({ file, name })));
    expect(portNames.filter(({ name }) => !PORT_NAMES_ALLOWED.has(name))).toEqual([]);
  });

  test('its package depends on no store, engine adapter or other service either', () => {
    const manifest = JSON.parse(readFileSync(join(SERVICE, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(Object.keys(manifest.dependencies ?? {}).filter((name) => FORBIDDEN.some((pattern) => pattern.test(name)))).toEqual([]);
  });
});
