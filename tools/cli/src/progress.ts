/**
 * A progress bar on one line of a terminal, redrawn in place (`\r`) at most every 100 ms and at the end. Twenty
 * lines rather than a library: one bar, one count, nothing to configure.
 */
export class ProgressBar {
  #drawn = 0;
  #done = 0;

  constructor(
    private readonly total: number,
    private readonly write: (text: string) => void,
    private readonly label = 'scores',
    private readonly width = 30,
  ) {}

  /** `count` more done; the bar is redrawn when 100 ms have passed since it last was, or when all are done. */
  advance(count = 1): void {
    this.#done = Math.min(this.total, this.#done + count);
    if (this.#done < this.total && Date.now() - this.#drawn < 100) return;
    this.#drawn = Date.now();
    const filled = this.total === 0 ? this.width : Math.round((this.#done / this.total) * this.width);
    const percent = this.total === 0 ? 100 : Math.floor((this.#done / this.total) * 100);
    this.write(`\r[${'#'.repeat(filled)}${'-'.repeat(this.width - filled)}] ${this.#done}/${this.total} ${this.label} ${percent}%`);
  }

  /** Ends the bar's line, so that what follows starts on a line of its own. */
  end(): void {
    if (this.#drawn > 0) this.write('\n');
  }
}

/**
 * `items` as the publisher takes them, the bar advanced for each one taken: the SDK takes an item of the next batch
 * only once the batch before it was accepted, so the bar is at most one batch (1,000 scores) ahead of what was accepted.
 */
export function* counted<T>(items: readonly T[], bar: ProgressBar): Generator<T> {
  for (const item of items) {
    yield item;
    bar.advance();
  }
}
