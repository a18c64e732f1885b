import { CREATES } from './create-stall';
import type { Column } from './measure-data-set';

interface Row {
  label: string;
  cell(column: Column, all: readonly Column[]): number | string | undefined;
  decimals?: number;
  /** The storage goal, judged on one column (1M + 1M when the run has it). */
  target?: { text: string; met(value: number): boolean };
}

const at = (field: keyof Column['figures']) => (column: Column) => column.figures[field];

const ROWS: Row[] = [
  { label: 'data-set build, s', cell: at('buildS'), decimals: 1 },
  { label: 'events.ndjson, MB', cell: at('eventLogMb'), decimals: 1 },
  { label: 'authorizations.json, MB', cell: at('storeMb'), decimals: 1 },
  { label: 'first start (spawn → ready; any import included), s', cell: at('firstStartS'), decimals: 1 },
  { label: '… of which the one-time import (its log line), s', cell: at('importS'), decimals: 1 },
  {
    label: 'serves after the first start (readers answered)',
    cell: ({ figures }) => (figures.served === undefined ? undefined : `${figures.served}/${figures.readers ?? '?'}`),
  },
  { label: 'data directory after the first start, MB', cell: at('dataDirMb'), decimals: 1 },
  { label: 'stop (SIGTERM → exit), s', cell: at('stopS'), decimals: 1 },
  { label: 'start-up (spawn → ready), s', cell: at('startupS'), decimals: 2, target: { text: '≤ 3 s', met: (v) => v <= 3 } },
  { label: 'RSS 2 s after start-up, MB', cell: at('rssMb'), target: { text: '≤ 400 MB', met: (v) => v <= 400 } },
  { label: 'peak RSS during start-up (VmHWM), MB', cell: at('peakMb') },
  { label: 'idle CPU over 10 s, % of one core', cell: at('idleCpuPercent'), decimals: 2, target: { text: '≤ 1 %', met: (v) => v <= 1 } },
  { label: `creates measured (of ${CREATES.toLocaleString('en-US')})`, cell: at('creates') },
  { label: 'create p50, ms', cell: at('createP50Ms'), decimals: 1 },
  { label: 'create p99 (4 in flight), ms', cell: at('createP99Ms'), decimals: 1, target: { text: '≤ 20 ms', met: (v) => v <= 20 } },
  { label: 'slowest create, ms', cell: at('createMaxMs'), decimals: 1 },
  {
    label: 'stall: worst /score during the creates, ms',
    cell: at('stallMs'),
    decimals: 1,
    target: { text: '≤ 100 ms', met: (v) => v <= 100 },
  },
  {
    label: 'create p99 right after a 200,000-score bulk ingest (4 in flight), ms',
    cell: at('createP99AfterIngestMs'),
    decimals: 1,
    target: { text: '≤ 20 ms', met: (v) => v <= 20 },
  },
  { label: 'slowest of those creates, ms', cell: at('createMaxAfterIngestMs'), decimals: 1 },
  {
    label: 'stall: worst /score during those creates, ms',
    cell: at('stallAfterIngestMs'),
    decimals: 1,
    target: { text: '≤ 100 ms', met: (v) => v <= 100 },
  },
  { label: '/score, 32 connections, requests/s', cell: at('scoreRps') },
  { label: '/score p99, ms', cell: at('scoreP99Ms') },
  {
    label: '/score p99 ÷ the smallest size’s',
    cell: (column, all) => {
      const base = all[0]?.figures.scoreP99Ms;
      const p99 = column.figures.scoreP99Ms;
      return base === undefined || p99 === undefined ? undefined : p99 / Math.max(base, 1);
    },
    decimals: 2,
    target: { text: '≤ 2×', met: (v) => v <= 2 },
  },
  { label: 'ingest, 1 score/request, 1 connection, scores/s', cell: at('ingest1PerS'), target: { text: '≥ 728/s', met: (v) => v >= 728 } },
  {
    label: 'ingest, 1 score/request, 32 connections, scores/s',
    cell: at('ingest32PerS'),
    target: { text: '≥ 1,192/s', met: (v) => v >= 1192 },
  },
  {
    label: 'ingest, batches of 1,000, 1 connection, scores/s',
    cell: at('ingestBatchPerS'),
    target: { text: '≥ 16,000/s', met: (v) => v >= 16_000 },
  },
];

function format(value: number | string | undefined, decimals = 0): string {
  if (value === undefined) return '–';
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/**
 * The storage targets are for 1M authorizations and 1M scores; a run without that column judges its
 * largest size instead (the heading says which), which shows the direction, not the verdict.
 */
export function judgedColumn(columns: readonly Column[]): Column | undefined {
  const sizes = columns.filter((column) => column.shape.scoreEvents === column.shape.authorizations);
  return sizes.find((column) => column.shape.authorizations === 1_000_000) ?? sizes.at(-1);
}

export function table(columns: readonly Column[]): string {
  const judged = judgedColumn(columns);
  const header = ['measurement', ...columns.map((column) => column.shape.name), 'target', `pass at ${judged?.shape.name ?? '–'}`];
  const lines = [`| ${header.join(' | ')} |`, `|---|${columns.map(() => '---:|').join('')}---|---|`];
  for (const row of ROWS) {
    const cells = columns.map((column) => format(row.cell(column, columns), row.decimals));
    let verdict = '';
    if (row.target && judged) {
      const value = row.cell(judged, columns);
      verdict = typeof value === 'number' && Number.isFinite(value) ? (row.target.met(value) ? 'pass' : '**fail**') : '–';
    }
    lines.push(`| ${row.label} | ${cells.join(' | ')} | ${row.target?.text ?? ''} | ${verdict} |`);
  }
  return lines.join('\n');
}
