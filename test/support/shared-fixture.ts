/**
 * What `start` makes, shared by the tests of a file (or of a describe block): made before them (after
 * `before`, if given), given to `stop` after them (undefined when it never started). The getter throws
 * outside the tests. `start` and `stop` in the options are the hooks' timeouts.
 */
export function sharedFixture<T>(
  start: () => Promise<T>,
  stop: (made: T | undefined) => Promise<void>,
  options: { before?: () => Promise<void>; start: number; stop?: number },
): () => T {
  let made: T | undefined;
  beforeAll(async () => {
    await options.before?.();
    made = await start();
  }, options.start);
  afterAll(() => stop(made), options.stop);
  return () => {
    if (made === undefined) throw new Error('the product is not started: read the suite inside its tests');
    return made;
  };
}
