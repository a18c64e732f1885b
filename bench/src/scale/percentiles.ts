/** Nearest-rank percentiles, as run.ts takes them. */
export function percentile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
