import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * A child process (the flag is process-wide): objects from one allocation site first all survive
 * young collections, which is what makes V8 pretenure a site; then, the young generation emptied,
 * short-lived objects from the same site are made with no collection in between, and the old
 * generation's growth is read.
 */
function oldGenerationGrowthKbWhenTuned(): number {
  const tuning = resolve(__dirname, '../dist/heap-tuning.js');
  const program = `
    const v8 = require('node:v8');
    require(${JSON.stringify(tuning)}).tuneHeapForServing();
    const oldUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;
    const make = (i) => ({ i, pair: [i, i + 1], inner: { i } });
    const kept = [];
    for (let n = 0; n < 800000; n += 1) kept.push(make(n));
    // Empties the young generation, so that no collection falls in the measure below and moves these.
    globalThis.gc({ type: 'minor' });
    const before = oldUsed();
    let sum = 0;
    for (let n = 0; n < 40000; n += 1) sum += make(n).i;
    process.stdout.write(JSON.stringify({ growth: oldUsed() - before, kept: kept.length, sum }));
  `;
  const child = spawnSync(process.execPath, ['--expose-gc', '-e', program], { encoding: 'utf8', timeout: 30_000 });
  if (child.status !== 0) throw new Error(`the probe failed: ${child.stderr}`);
  const { growth } = JSON.parse(child.stdout) as { growth: number };
  return growth / 1024;
}

describe('heap tuning for a serving process', () => {
  // 40,000 objects of about 100 bytes: about 5.7 MB when they go to the old generation, under 0.1 MB
  // when not. Without the tuning V8 pretenures the site in about half the runs (fewer on a busy
  // machine), so four runs catch a runner that lost the tuning nearly every time.
  test('when objects of a site once survived young collections, then its short-lived objects are still made young', () => {
    for (let run = 0; run < 4; run += 1) expect(oldGenerationGrowthKbWhenTuned()).toBeLessThan(1024);
  });
});
