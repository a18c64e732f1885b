/** Runs tasks that share a key one after another; tasks for different keys run freely. */
export interface PerKeyQueue {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Resolves once every task started so far has settled. */
  idle(): Promise<void>;
}

export function createPerKeyQueue(): PerKeyQueue {
  /** The last task per key, as a promise that never rejects, so one failure does not block the next. */
  const tails = new Map<string, Promise<void>>();

  return {
    run(key, task) {
      const result = (tails.get(key) ?? Promise.resolve()).then(task);
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },

    async idle() {
      await Promise.all(tails.values());
    },
  };
}
