import { FLAT_GROWTH, type MemoryRow } from './memory';
import type { Outage } from './outages';
import type { Outlived } from './revocations';
import { sum, type Tally, type Timeline } from './tally';
import { MAX_IN_FLIGHT } from './traffic';

export interface SoakResult {
  header: string;
  tally: Tally;
  timeline: Timeline;
  outages: Outage[];
  revocations: { confirmed: number; pending: number; outlived: Outlived[]; maxOverrunMs: number; stillAcceptedAtEnd: number };
  memory: MemoryRow[];
  errorLines: Map<string, Map<string, number>>;
  crashed: string[];
  skippedTicks: Record<string, number>;
}

export interface Goal {
  name: string;
  value: string;
  met: boolean;
}

const s = (ms: number) => (ms / 1000).toFixed(0);
const mb = (value: number) => value.toFixed(0);

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

function table(head: string[], rows: (string | number)[][]): string[] {
  const align = head.map((h, i) => (i === 0 || h.startsWith('answer') ? '---' : '---:'));
  return [`| ${head.join(' | ')} |`, `|${align.join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

export function goals(result: SoakResult): Goal[] {
  const totals = result.tally.totals();
  const grown = result.memory.filter((m) => !(m.growth <= FLAT_GROWTH));
  return [
    { name: '5xx other than the documented 503 SERVICE_UNAVAILABLE', value: String(totals.serverErrors), met: totals.serverErrors === 0 },
    {
      name: 'requests without an answer (connection refused or reset, 10 s timeout)',
      value: String(totals.noAnswer),
      met: totals.noAnswer === 0,
    },
    {
      name: 'revocations outlived',
      value: String(new Set(result.revocations.outlived.map((o) => o.clientId)).size),
      met: result.revocations.outlived.length === 0,
    },
    {
      name: `services' memory flat (RSS at the end ≤ warm + ${FLAT_GROWTH * 100}%)`,
      value: grown.length === 0 ? 'all flat' : grown.map((m) => `${m.service} ${(m.growth * 100).toFixed(0)}%`).join(', '),
      met: grown.length === 0,
    },
    {
      name: 'services that exited on their own',
      value: result.crashed.length === 0 ? 'none' : result.crashed.join(', '),
      met: result.crashed.length === 0,
    },
  ];
}

/** The table for the README, then the evidence an operator needs to follow up a missed goal. */
export function render(result: SoakResult): string {
  const { tally, timeline } = result;
  const lines: string[] = [result.header, ''];

  lines.push(
    ...table(
      ['request kind', 'requests', '2xx', 'refused (4xx)', 'documented 503', 'other 5xx', 'no answer', 'p50 ms', 'p99 ms', 'max ms'],
      [...tally.kinds].map(([kind, k]) => [
        kind,
        k.requests,
        k.ok,
        sum(k.refused),
        k.documented503,
        sum(k.serverErrors),
        sum(k.noAnswer),
        percentile(k.latenciesMs, 0.5).toFixed(1),
        percentile(k.latenciesMs, 0.99).toFixed(1),
        Math.max(...k.latenciesMs).toFixed(0),
      ]),
    ),
    '',
  );

  const refusals = [...tally.kinds].flatMap(([kind, k]) =>
    [...k.notOk]
      .map(([answer, phases]) => ({ answer, phases, n: sum(phases) }))
      .sort((a, b) => b.n - a.n)
      .map(({ answer, phases, n }) => [kind, answer, n, [...phases].map(([phase, m]) => `${phase} ${m}`).join(', ')]),
  );
  if (refusals.length > 0) lines.push(...table(['refused or failed', 'answer', 'count', 'answer in phase'], refusals), '');

  lines.push(
    ...table(
      ['phase', 'from s', 'down s', 'requests', '2xx', 'refused', 'documented 503', 'other 5xx', 'no answer'],
      timeline.phases.map(({ name, fromMs }) => {
        const p = tally.byPhase.get(name);
        const outage = result.outages.find((o) => o.phase === name);
        const down = outage?.downMs === undefined ? '' : s(outage.downMs);
        return [
          name,
          s(fromMs),
          down,
          p?.requests ?? 0,
          p?.ok ?? 0,
          p?.refused ?? 0,
          p?.documented503 ?? 0,
          p?.serverErrors ?? 0,
          p?.noAnswer ?? 0,
        ];
      }),
    ),
    '',
  );

  const r = result.revocations;
  const distinct = new Set(r.outlived.map((o) => o.clientId)).size;
  lines.push(
    ...table(
      ['revocations', 'count'],
      [
        ['answered 200 (bound 1 s)', r.confirmed],
        [`answered 202 "enforcement": "pending" (bound: the staleness bound)`, r.pending],
        ['outlived: a replica accepted the key after the bound', distinct],
        ['longest overrun past the bound, s (at least)', distinct ? (r.maxOverrunMs / 1000).toFixed(1) : '–'],
        ['still accepted at the end', r.stillAcceptedAtEnd],
      ],
    ),
    '',
  );

  lines.push(
    ...table(
      ['service', 'RSS warm MB', 'RSS end MB', 'growth', 'peak MB', 'error log lines'],
      result.memory.map((m) => [
        m.service,
        mb(m.warmMb),
        mb(m.endMb),
        `${m.growth >= 0 ? '+' : ''}${(m.growth * 100).toFixed(0)}%`,
        mb(m.peakMb),
        sum(result.errorLines.get(m.service) ?? new Map<string, number>()),
      ]),
    ),
    '',
  );

  lines.push('Goals:', ...goals(result).map((g) => `- ${g.met ? 'met   ' : 'MISSED'} ${g.name}: ${g.value}`), '');
  lines.push(...evidence(result));
  return lines.join('\n');
}

function evidence(result: SoakResult): string[] {
  const lines: string[] = [];
  const groups = new Map<string, { n: number; first: number; last: number; requestId?: string }>();
  for (const f of result.tally.failures) {
    const key = `${f.phase} | ${f.kind} | ${f.what}`;
    const group = groups.get(key);
    if (group) {
      group.n += 1;
      group.last = f.atMs;
    } else groups.set(key, { n: 1, first: f.atMs, last: f.atMs, ...(f.requestId ? { requestId: f.requestId } : {}) });
  }
  if (groups.size > 0) {
    lines.push('Failed requests (phase | kind | answer: count, from–to s, first requestId):');
    for (const [key, g] of groups) lines.push(`  ${key}: ${g.n}, ${s(g.first)}–${s(g.last)} s${g.requestId ? `, ${g.requestId}` : ''}`);
    lines.push('');
  }
  if (result.revocations.outlived.length > 0) {
    lines.push('Revocations outlived (client ID, revoke answer, replica: bound passed at, last accepted at, refused from, answers seen):');
    for (const o of result.revocations.outlived.slice(0, 30)) {
      const refused = o.refusedAtMs === undefined ? 'never' : `${s(o.refusedAtMs)} s`;
      lines.push(
        `  ${o.clientId} ${o.enforcement === 'confirmed' ? '200' : '202'} ${o.replica}: ${s(o.deadlineAtMs)} s, ${s(o.lastAcceptedAtMs)} s, ${refused}, ${[...o.answers].join('/')}`,
      );
    }
    if (result.revocations.outlived.length > 30) lines.push(`  … and ${result.revocations.outlived.length - 30} more`);
    lines.push('');
  }
  for (const [service, messages] of result.errorLines) {
    if (messages.size === 0) continue;
    lines.push(`Error log lines of ${service}:`, ...[...messages].sort((a, b) => b[1] - a[1]).map(([msg, n]) => `  ${n} × ${msg}`), '');
  }
  const skipped = Object.entries(result.skippedTicks).filter(([, n]) => n > 0);
  if (skipped.length > 0) {
    lines.push(`Ticks skipped (${MAX_IN_FLIGHT} requests of that kind in flight): ${skipped.map(([k, n]) => `${k} ${n}`).join(', ')}`, '');
  }
  return lines;
}
