import { dirname, join } from 'node:path';

/** This package's worker programs, each a file of src/sqlite. */
export type WorkerProgram = 'access-log-worker' | 'checkpoint-worker';

/**
 * The compiled JavaScript of one of this package's worker programs, to start a Worker from. Always
 * the file in dist/: a Worker cannot load TypeScript, and under jest this module itself runs from
 * src/ (ts-jest), so `__dirname` would point to the sources. Found from the package's root, the one
 * place that is the same whichever of the two runs; the tests therefore need `tsc -b` first, as
 * `npm test` does.
 */
export function compiledWorker(program: WorkerProgram): string {
  return join(dirname(require.resolve('@rsd/embedded/package.json')), 'dist', 'sqlite', `${program}.js`);
}
