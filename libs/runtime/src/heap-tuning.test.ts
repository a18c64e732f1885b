import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * A child process (the flag is process-wide): objects from one allocation site first all survive
 * young collections, which is what makes V8 pretenure a site; then short-lived objects from the
 * same site are made with no collection in between, and the old generation's growth is read.
 * Without the tuning, V8 put them in the old generation in most runs (about 2.8 MB here).
 */
function oldGenerationGrowthKb(tuned: boolean): number {
  const tuning = resolve(__dirname, '../dist/heap-tuning.js');
  const program = `
    const v8 = require('node:v8');
    if (${String(tuned)}) require(${JSON.stringify(tuning)}).tuneHeapForServing();
    const oldUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;
    const make = (i) => ({ i, pair: [i, i + 1], inner: { i } });
    const kept = [];
    for (let n = 0; n < 800000; n += 1) kept.push(make(n));
    const before = oldUsed();
    let sum = 0;
    for (let n = 0; n < 20000; n += 1) sum += make(n).i;
    process.stdout.write(JSON.stringify({ growth: oldUsed() - before, kept: kept.length, sum }));
  `;
  const child = spawnSync(process.execPath, ['-e', program], { encoding: 'utf8', timeout: 30_000 });
  if (child.status !== 0) throw new Error(`the probe failed: ${child.stderr}`);
  const { growth } = JSON.parse(child.stdout) as { growth: number };
  return growth / 1024;
}

describe('heap tuning for a serving process', () => {
  // 20,000 objects of about 100 bytes: 2 MB or more when they went to the old generation.
  test('when objects of a site once survived young collections, then its short-lived objects are still made young', () => {
    for (let run = 0; run < 2; run += 1) expect(oldGenerationGrowthKb(true)).toBeLessThan(256);
  });

  test('without the tuning, the same probe sees them made old (so the test above can fail)', () => {
    // V8 pretenured in three runs of four here: the largest of five runs is taken.
    const growths: number[] = [];
    for (let run = 0; run < 5 && Math.max(0, ...growths) < 1024; run += 1) growths.push(oldGenerationGrowthKb(false));
    expect(Math.max(...growths)).toBeGreaterThan(1024);
  });
});
