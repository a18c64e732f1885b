import type { RunResult } from './run-order';

const LEGEND = [
  'Columns: /healthz s, the slowest process from spawn to its first 200 (node start included); last server start s,',
  'how long the last server took from `infra.sh up` to answering; all ready s, from that `infra.sh up` to all four',
  "/readyz 200 (the server's own start included; the bound is 30 s from the server answering); Kafka restart: drop s,",
  'from `infra.sh stop kafka` to all four /readyz failing; back s, from `infra.sh up kafka` to all four ready again',
  'for good (the start of the last return, after which none failed for 5 s);',
  'exits, processes that ended on their own; error lines, error-level log lines of the four processes.',
].join('\n');

const seconds = (ms: number | undefined) => (ms === undefined ? '–' : (ms / 1000).toFixed(1));

function table(head: string[], rows: string[][], numeric: ReadonlySet<number>): string[] {
  const widths = head.map((h, i) => Math.max(3, h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (numeric.has(i) ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(head), rule, ...rows.map(line)];
}

function median(values: number[]): number | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[Math.floor((sorted.length - 1) / 2)];
}

const spread = (values: (number | undefined)[]) => {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length === 0 ? '–' : `${seconds(median(known))} / ${seconds(Math.max(...known))}`;
};

/** One row per order over every repetition: how many passed, median and worst of each time. */
export function renderSummary(results: readonly RunResult[]): string {
  const orders = [...new Set(results.map((r) => r.order.join(' → ')))];
  const rows = orders.map((order) => {
    const runs = results.filter((r) => r.order.join(' → ') === order);
    return [
      order,
      `${runs.filter((r) => r.failures.length === 0).length}/${runs.length}`,
      spread(runs.map((r) => r.readyAfterLastServerMs)),
      spread(runs.map((r) => r.dropAfterKafkaStopMs)),
      spread(runs.map((r) => r.returnAfterKafkaStartMs)),
      String(runs.reduce((sum, r) => sum + r.unexpectedExits.length, 0)),
    ];
  });
  const head = ['order', 'passed', 'all ready s (median / max)', 'Kafka restart: drop s', 'back s', 'exits'];
  return table(head, rows, new Set([1, 2, 3, 4, 5])).join('\n');
}

/** A Markdown table, one row per run, then the error-level log lines seen, then the failures. */
export function render(header: string, results: readonly RunResult[]): string {
  const rows = results.map((r) => [
    String(r.repetition),
    r.order.join(' → '),
    seconds(r.healthyAfterMs),
    seconds(r.lastServerStartMs),
    seconds(r.readyAfterLastServerMs),
    seconds(r.dropAfterKafkaStopMs),
    seconds(r.returnAfterKafkaStartMs),
    String(r.unexpectedExits.length),
    [...r.errorLines.values()].reduce((sum, n) => sum + n, 0).toString(),
    r.failures.length === 0 ? 'pass' : 'FAIL',
  ]);
  const head = [
    '#',
    'order',
    '/healthz s',
    'last server start s',
    'all ready s',
    'Kafka restart: drop s',
    'back s',
    'exits',
    'error lines',
    'result',
  ];
  const passed = results.filter((r) => r.failures.length === 0).length;
  const out = [
    header,
    '',
    ...table(head, rows, new Set([0, 2, 3, 4, 5, 6, 7, 8])),
    '',
    `${passed}/${results.length} runs passed.`,
    '',
    LEGEND,
    '',
    'By order, over every repetition:',
    '',
    renderSummary(results),
  ];

  const errors = new Map<string, number>();
  for (const r of results) for (const [message, count] of r.errorLines) errors.set(message, (errors.get(message) ?? 0) + count);
  if (errors.size > 0) {
    out.push('', 'Error-level log lines, all runs:', ...[...errors].map(([message, count]) => `- ${count}× ${message}`));
  }
  for (const r of results.filter((x) => x.failures.length > 0)) {
    out.push('', `Run ${r.repetition} (${r.order.join(' → ')}) failed; logs in ${r.logDir}:`, ...r.failures.map((f) => `- ${f}`));
  }
  return out.join('\n');
}
