import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compiledWorker, type WorkerProgram } from './compiled-worker';

/** Every module a compiled program loads: its relative requires followed, the others listed as they are named. */
function loads(file: string, seen = new Set<string>()): Set<string> {
  const found = new Set<string>();
  for (const [, name] of readFileSync(file, 'utf8').matchAll(/require\("([^"]+)"\)/g)) {
    if (!name!.startsWith('.')) {
      found.add(name!);
      continue;
    }
    const next = join(dirname(file), `${name}.js`);
    if (seen.has(next)) continue;
    seen.add(next);
    for (const inner of loads(next, seen)) found.add(inner);
  }
  return found;
}

describe('the worker programs', () => {
  // Each thread is an isolate of its own: what it loads is heap the product keeps for good. The contracts
  // (zod and every schema) cost the access log's writer 8 MB of heap and the process 13 MB of memory.
  it.each<WorkerProgram>(['access-log-worker', 'checkpoint-worker'])('%s loads nothing but Node.js itself', (program) => {
    const outside = [...loads(compiledWorker(program))].filter((name) => !name.startsWith('node:'));
    expect(outside).toEqual([]);
  });
});
