import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a contract suite's factory gives: the thing under test, and how to dispose of it. */
export interface Cleanable {
  cleanup(): Promise<void>;
}

/**
 * One object for the whole describe block that stands for whatever `current` gives at the moment:
 * each property is read from it then, methods bound to it. Suites name the object once, and each
 * test reaches the one opened for it.
 */
function standingFor<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get(_, property) {
      const target = current();
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * In a describe block: the fixture `open` gives before each test, cleaned up after it. What a test
 * opens beside it must close first: declare that afterEach before calling this (hooks run in the
 * order declared).
 */
export function aFixturePerTest<F extends Cleanable>(open: () => Promise<F>): F {
  let fixture: F | undefined;

  beforeEach(async () => {
    fixture = await open();
  });

  afterEach(async () => {
    const opened = fixture;
    fixture = undefined;
    await opened?.cleanup();
  });

  return standingFor(() => {
    if (!fixture) throw new Error('the fixture is opened for each test, and used only inside one');
    return fixture;
  });
}

/**
 * A store contract's describe block: `body` gets the store, one object that stands for each test's
 * own, opened by `open` before the test and cleaned up after it.
 */
export function describeStoreContract<S extends object>(
  title: string,
  open: () => Promise<{ store: S } & Cleanable>,
  body: (store: S) => void,
): void {
  describe(title, () => {
    const fixture = aFixturePerTest(open);
    body(standingFor(() => fixture.store));
  });
}

/**
 * In a describe block (or a file): what `open` opens in a new directory under the system's temp dir
 * (`rsd-<name>-…`) before each test, closed and the directory removed after it; one object stands
 * for each test's own.
 */
export function aStoreInATempDirectoryPerTest<S extends { close(): Promise<void> }>(
  name: string,
  open: (dir: string) => S | Promise<S>,
): S {
  const fixture = aFixturePerTest(async () => {
    const dir = await mkdtemp(join(tmpdir(), `rsd-${name}-`));
    const store = await open(dir);
    return {
      store,
      cleanup: async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });
  return standingFor(() => fixture.store);
}
